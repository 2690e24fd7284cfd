#ifndef SERIALIZERD_CLIBXML2_SHIM_H
#define SERIALIZERD_CLIBXML2_SHIM_H
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#include <libxml/entities.h>
#endif
