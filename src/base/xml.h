/* Internal: hardened XML reading with libxml2, shared by the URDF parser and
 * the world-file reader. */
#ifndef TALUS_BASE_XML_H
#define TALUS_BASE_XML_H

#include <libxml/tree.h>
#include <stddef.h>

/* Parse buf (len bytes) into *out: no network (XML_PARSE_NONET), no entity
 * substitution, no external DTD or entity ever loaded, libxml2's size and
 * depth limits on, errors captured rather than printed. Every element
 * records the line where its start tag begins (see tl_xml_line). Returns 0,
 * or -1 with *line and msg (cap bytes) describing the first fatal error
 * (else the first error); *out is then NULL. */
int tl_xml_parse(const char *buf, size_t len, xmlDocPtr *out, int *line, char *msg, size_t cap);

/* Line where the start tag of node begins (libxml2's own line, which is
 * where the start tag ends and is capped at 65535, for nodes not parsed by
 * tl_xml_parse); 0 if unknown. */
int tl_xml_line(const xmlNode *node);

/* The local name (without a namespace prefix) of the root element of the XML
 * text buf (len bytes), found without parsing: a BOM, white space, <?...?>,
 * comments and a DOCTYPE (with an internal subset in [...]) are skipped. For
 * routing a file to its loader, which then validates it (and refuses a
 * DOCTYPE or namespace with its own clear message). 0 and name (cap bytes,
 * truncated) set, or -1 if no element start is found. */
int tl_xml_root_name(const char *buf, size_t len, char *name, size_t cap);

#endif
