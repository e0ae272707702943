// bench/loops/kvsort.cpp: the sort of kvsort.sgl with C++'s std::stable_sort
// over an array of structs compared by (key, val), as a C++ programmer
// writes it (the same input, timed region and result line).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

struct KV {
    int64_t key, val;
};

static uint64_t splitmix64_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? std::strtoll(argv[1], nullptr, 10) : 5000000;
    int64_t reps = argc > 2 ? std::strtoll(argv[2], nullptr, 10) : 1;
    std::vector<KV> kv(static_cast<size_t>(n));
    uint64_t s = 61;
    for (int64_t i = 0; i < n; i++)
        kv[static_cast<size_t>(i)] = {static_cast<int64_t>(splitmix64_next(&s) % 1000000u), i};
    std::vector<KV> out;
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t rep = 0; rep < reps; rep++) {
        out = kv;
        std::stable_sort(out.begin(), out.end(), [](const KV &a, const KV &b) {
            return a.key < b.key || (a.key == b.key && a.val < b.val);
        });
    }
    auto t1 = std::chrono::steady_clock::now();
    uint64_t h = 0;
    for (const KV &e : out) {
        h = h * 31 + static_cast<uint64_t>(e.key);
        h = h * 31 + static_cast<uint64_t>(e.val);
    }
    std::printf("result %lld\ntime %.9f\n", static_cast<long long>(h),
                std::chrono::duration<double>(t1 - t0).count());
    return 0;
}
