#!/usr/bin/env python3
"""Guards: the include graph of src/ (issue 22 §1, docs/architecture: dependencies run one way).

Scans every #include "..." line of src/ (resolved against src/ and include/, followed transitively
through the project's headers) and fails, naming file:line of the offending include and the chain
that reaches the forbidden header, when:
  1. a file of the native engine (src/native, src/contact) reaches an engine-layer header
     (src/engine/*, talus/engine_plugin.h): the native engine knows nothing of plugins;
  2. a file of the engine layer (src/engine) reaches a native-engine internal header (src/native/*,
     the contact layer's workspace headers: constraint.h, contact_gen.h, broadphase.h,
     solver_internal.h, lcp.h, collide_internal.h);
  3. src/world/world_internal.h (the world's description) reaches a native-engine internal header;
  4. the lower rooms (src/base, src/math, src/model, src/dynamics) reach a higher one (world, engine,
     native, contact, batch, tasks, sweep, record, scene, cli);
  5. a file of the facade (src/world) tests which engine serves the world (w->engine as a condition
     or compared: `if (w->engine)`, `&& w->engine`, `w->engine ?`, `w->engine == ...`) instead of
     calling its table (w->engine->op(...)).
Usage: test_layering.py SOURCE_DIR.  Exit 0: every rule holds; 1: the violations are printed.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

NATIVE_INTERNAL = re.compile(
    r'^(src/native/.*|src/contact/(constraint|contact_gen|broadphase|solver_internal|lcp|collide_internal)\.h)$')
ENGINE_LAYER = re.compile(r'^(src/engine/.*|include/talus/engine_plugin\.h)$')
HIGHER_ROOMS = re.compile(r'^src/(world|engine|native|contact|batch|tasks|sweep|record|scene|cli)/')


def rules(path):
    """(name, pattern of forbidden headers) that apply to the file `path` (relative to the root)."""
    out = []
    if path.startswith(('src/native/', 'src/contact/')):
        out.append(('the native engine must not include the engine layer', ENGINE_LAYER))
    if path.startswith('src/engine/'):
        out.append(('the engine layer must not include native-engine internals', NATIVE_INTERNAL))
    if path == 'src/world/world_internal.h':
        out.append(("the world's description must not include native-engine internals", NATIVE_INTERNAL))
    if path.startswith(('src/base/', 'src/math/', 'src/model/', 'src/dynamics/')):
        out.append(('a lower room must not include a higher one', HIGHER_ROOMS))
    return out


def includes(root, path, cache):
    """[(line number, resolved path relative to root or None, text)] of the file's quoted includes."""
    if path in cache:
        return cache[path]
    res = []
    try:
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                target = None
                for base in (os.path.dirname(path), 'src', 'include'):
                    cand = os.path.normpath(os.path.join(base, name))
                    if os.path.isfile(os.path.join(root, cand)):
                        target = cand
                        break
                res.append((n, target, name))
    except OSError:
        pass
    cache[path] = res
    return res


def check_file(root, path, cache):
    errors = []
    for why, bad in rules(path):
        for n, target, name in includes(root, path, cache):
            if target is None:
                continue
            # breadth-first through the headers this include brings in
            seen, queue = {target}, [(target, [name])]
            while queue:
                cur, chain = queue.pop(0)
                if bad.match(cur):
                    via = ' -> '.join(chain)
                    errors.append(f'{path}:{n}: {why}: #include "{name}" reaches {cur}'
                                  + (f' (via {via})' if len(chain) > 1 else ''))
                    break
                for _, nxt, nname in includes(root, cur, cache):
                    if nxt and nxt not in seen:
                        seen.add(nxt)
                        queue.append((nxt, chain + [nname]))
    return errors


ENGINE_BRANCH = re.compile(r'((\(|!|&&|\|\|)\s*\w+->engine\b(?!->|_)|\w+->engine\b(?!->|_)\s*(\?|==|!=|&&|\|\||\)))')


def check_dispatch(root, path):
    if not path.startswith('src/world/'):
        return []
    errors = []
    with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
        for n, line in enumerate(f, 1):
            code = line.split('//')[0]
            if code.lstrip().startswith(('*', '/*')):
                continue
            if ENGINE_BRANCH.search(code):
                errors.append(f'{path}:{n}: the facade must dispatch through w->engine->op, not branch on '
                              f'the engine: {line.strip()}')
    return errors


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    cache, errors, nfiles = {}, [], 0
    for d, _, files in os.walk(os.path.join(root, 'src')):
        for fn in sorted(files):
            if fn.endswith(('.c', '.h')):
                path = os.path.relpath(os.path.join(d, fn), root)
                nfiles += 1
                errors += check_file(root, path, cache)
                errors += check_dispatch(root, path)
    if not os.path.isfile(os.path.join(root, 'src/world/world_internal.h')):
        errors.append('src/world/world_internal.h: missing (the rules name it)')
    for e in errors:
        print(e)
    print(f'layering: {nfiles} files of src/ scanned, {len(errors)} violation(s)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
