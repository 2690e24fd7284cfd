#include "serializerd_regex.h"

#include <re2/re2.h>
#include <cstring>
#include <new>

struct serializerd_regex {
    RE2 re;
    serializerd_regex(const re2::StringPiece &pattern, const RE2::Options &options) : re(pattern, options) {}
};

extern "C" serializerd_regex *serializerd_regex_compile(const char *pattern, size_t length, size_t max_memory,
                                                        char *error, size_t error_size) {
    RE2::Options options;
    options.set_encoding(RE2::Options::EncodingUTF8);
    options.set_log_errors(false);
    options.set_max_mem(static_cast<int64_t>(max_memory));
    auto *regex = new (std::nothrow) serializerd_regex(re2::StringPiece(pattern, length), options);
    if (!regex) {
        if (error_size) std::strncpy(error, "out of memory", error_size - 1), error[error_size - 1] = 0;
        return nullptr;
    }
    if (!regex->re.ok()) {
        if (error_size) {
            std::strncpy(error, regex->re.error().c_str(), error_size - 1);
            error[error_size - 1] = 0;
        }
        delete regex;
        return nullptr;
    }
    return regex;
}

extern "C" int serializerd_regex_search(const serializerd_regex *regex, const char *text, size_t length) {
    return RE2::PartialMatch(re2::StringPiece(text, length), regex->re) ? 1 : 0;
}

extern "C" void serializerd_regex_free(serializerd_regex *regex) { delete regex; }
