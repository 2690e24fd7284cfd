// The JSON reference for `make bench`: simdjson's text minifier (validates nothing, only
// strips whitespace outside strings — less work than the normalizer, the fastest thing a
// JSON path can do) timed the way serializerd-bench times its own side: per file, the
// median per-iteration time of >= 5 iterations and >= MIN_SECONDS after a warm-up.
// Prints one line per file: "<MB/s> <output bytes>". Build: c++ -O2 minify.cpp -lsimdjson.
// SIMDJSON_FORCE_IMPLEMENTATION=haswell selects the AVX2 kernel (the AVX-512 one is
// slower on Zen 4, simdjson#2334).
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv) {
    double minSeconds = 0.5;
    if (const char *s = std::getenv("MIN_SECONDS")) minSeconds = std::atof(s);
    for (int i = 1; i < argc; i++) {
        std::ifstream in(argv[i], std::ios::binary);
        if (!in) { std::fprintf(stderr, "cannot open %s\n", argv[i]); return 1; }
        std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::unique_ptr<char[]> out(new char[bytes.size() + simdjson::SIMDJSON_PADDING]);
        size_t written = 0;
        auto once = [&] {
            if (simdjson::minify(bytes.data(), bytes.size(), out.get(), written) != simdjson::SUCCESS) {
                std::fprintf(stderr, "simdjson::minify failed on %s\n", argv[i]);
                std::exit(1);
            }
        };
        once();
        std::vector<double> times;
        double start = now();
        while (times.size() < 5 || (now() - start < minSeconds && times.size() < 1000)) {
            double t0 = now();
            once();
            times.push_back(now() - t0);
        }
        std::sort(times.begin(), times.end());
        double median = times.size() % 2 ? times[times.size() / 2] : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
        std::printf("%.1f %zu\n", bytes.size() / 1e6 / median, written);
    }
    return 0;
}
