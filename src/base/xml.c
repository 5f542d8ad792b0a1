/* Hardened XML reading (see xml.h). libxml2 records for each element the line
 * where its start tag ENDS, capped at 65535; a SAX start-element hook records
 * instead the line where the tag begins, uncapped, in node->_private. */
#include "base/xml.h"

#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct xml_error {
  int set, line;
  char message[400];
} xml_error;

/* The first error of a parse, and the first fatal one (which is what makes
 * the document unusable; plain errors such as an undeclared namespace prefix
 * leave a usable tree). */
typedef struct xml_errors {
  xml_error first, fatal;
} xml_errors;

static void keep_error(xml_error *dst, int line, const char *message) {
  if (dst->set) return;
  dst->set = 1;
  dst->line = line;
  snprintf(dst->message, sizeof(dst->message), "%s", message ? message : "unknown error");
  for (char *c = dst->message; *c; c++)
    if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
  size_t n = strlen(dst->message);
  while (n > 0 && dst->message[n - 1] == ' ') dst->message[--n] = '\0';
}

#if LIBXML_VERSION >= 21200
static void on_xml_error(void *data, const xmlError *e) {
#else
static void on_xml_error(void *data, xmlErrorPtr e) {
#endif
  xml_errors *errors = ((xmlParserCtxtPtr)data)->_private;
  if (!errors || e->level < XML_ERR_ERROR) return;
  keep_error(&errors->first, e->line, e->message);
  if (e->level == XML_ERR_FATAL) keep_error(&errors->fatal, e->line, e->message);
}

/* Build the element as libxml2 does, then record the line on which its start
 * tag begins. The parser stands on the '>' or '/>' that closes the tag; since
 * '<' cannot occur inside a tag, the nearest '<' before it starts the tag. */
static void on_start_element(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                             const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                             int nb_attributes, int nb_defaulted, const xmlChar **attributes) {
  xmlParserCtxtPtr ctxt = ctx;
  xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                        nb_defaulted, attributes);
  xmlNodePtr node = ctxt->node;
  xmlParserInputPtr in = ctxt->input;
  if (!node || node->type != XML_ELEMENT_NODE || node->_private || !xmlStrEqual(node->name, localname))
    return; /* the element was not created (e.g. too deep) */
  if (!in || !in->base || !in->cur || in->line <= 0) return;
  long line = in->line;
  const xmlChar *c = in->cur;
  while (c > in->base && *c != '<')
    if (*--c == '\n') line--;
  if (*c == '<' && line > 0) node->_private = (void *)(intptr_t)line;
}

/* Entity resolver that loads nothing: external entities and DTDs stay out. */
static xmlParserInputPtr no_entity(void *ctx, const xmlChar *public_id, const xmlChar *system_id) {
  (void)ctx, (void)public_id, (void)system_id;
  return NULL;
}

int tl_xml_parse(const char *buf, size_t len, xmlDocPtr *out, int *line, char *msg, size_t cap) {
  *out = NULL;
  *line = 0;
  if (len > 0x7fffffff) {
    snprintf(msg, cap, "file is larger than 2 GB");
    return -1;
  }
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) {
    snprintf(msg, cap, "out of memory for the XML parser");
    return -1;
  }
  xml_errors errors;
  memset(&errors, 0, sizeof(errors));
  ctxt->_private = &errors;
  ctxt->sax->serror = on_xml_error;
  ctxt->sax->resolveEntity = no_entity;
  ctxt->sax->externalSubset = NULL;
  ctxt->sax->startElementNs = on_start_element;
  int options = XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  xmlDocPtr xml = xmlCtxtReadMemory(ctxt, buf, (int)len, NULL, NULL, options);
  if (!xml) {
    const xmlError *e = xmlCtxtGetLastError(ctxt);
    keep_error(&errors.first, e ? e->line : 0, e ? e->message : NULL);
  }
  xmlFreeParserCtxt(ctxt);
  if (xml) {
    *out = xml;
    return 0;
  }
  const xml_error *e = errors.fatal.set ? &errors.fatal : &errors.first;
  *line = e->line;
  snprintf(msg, cap, "%s", e->message);
  return -1;
}

int tl_xml_line(const xmlNode *node) {
  if (!node) return 0;
  if (node->type == XML_ELEMENT_NODE && node->_private) return (int)(intptr_t)node->_private;
  long line = xmlGetLineNo(node);
  return line > 0 && line < 0x7fffffff ? (int)line : 0;
}

int tl_xml_root_name(const char *buf, size_t len, char *name, size_t cap) {
  if (!buf || !name || cap == 0) return -1;
  name[0] = '\0';
  const char *c = buf, *end = buf + len;
  if (len >= 3 && memcmp(c, "\xEF\xBB\xBF", 3) == 0) c += 3;
  for (;;) {
    while (c < end && (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n')) c++;
    if (end - c < 2 || c[0] != '<') return -1;
    if (c[1] == '?') { /* <? ... ?> */
      const char *q = c + 2;
      while (q + 1 < end && !(q[0] == '?' && q[1] == '>')) q++;
      if (q + 1 >= end) return -1;
      c = q + 2;
    } else if (end - c >= 4 && memcmp(c, "<!--", 4) == 0) {
      const char *q = c + 4;
      while (q + 2 < end && !(q[0] == '-' && q[1] == '-' && q[2] == '>')) q++;
      if (q + 2 >= end) return -1;
      c = q + 3;
    } else if (c[1] == '!') { /* <!DOCTYPE name [ internal subset ]>: brackets and quotes skipped whole */
      const char *q = c + 2;
      int depth = 0;
      char quote = 0;
      for (; q < end; q++) {
        if (quote) {
          if (*q == quote) quote = 0;
        } else if (*q == '"' || *q == '\'') {
          quote = *q;
        } else if (*q == '[') {
          depth++;
        } else if (*q == ']') {
          depth--;
        } else if (*q == '>' && depth <= 0) {
          break;
        }
      }
      if (q >= end) return -1;
      c = q + 1;
    } else {
      break;
    }
  }
  const char *s = c + 1, *e = s;
  while (e < end && *e != '>' && *e != '/' && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n') e++;
  if (e == end || e == s) return -1;
  const char *colon = memchr(s, ':', (size_t)(e - s)); /* a prefix: the local name decides */
  if (colon) s = colon + 1;
  size_t n = (size_t)(e - s);
  if (n >= cap) n = cap - 1;
  memcpy(name, s, n);
  name[n] = '\0';
  return 0;
}
