#ifndef SERIALIZERD_CCURL_SHIM_H
#define SERIALIZERD_CCURL_SHIM_H
#include <curl/curl.h>
#endif
