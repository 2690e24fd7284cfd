#ifndef SERIALIZERD_CLIBXML2_SHIM_H
#define SERIALIZERD_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU, and <libxml/encoding.h> then includes the system
// <unicode/*.h>, whose enums clash with Foundation's bundled ICU in any module that
// also imports Foundation. serializerd never touches ICU types (only pointers to
// encoding handlers), so the module is built without them.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#include <libxml/entities.h>
#include <libxml/uri.h>
#endif
