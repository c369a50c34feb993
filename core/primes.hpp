// Prime counting: a CPU-bound workload for the schedulers (no I/O, known answer).
//
// The benchmarks (bench/primes) and the scheduler tests count primes in [lo, hi) three ways:
// sequentially with count_primes(), by recursive bisection of a PrimeRange down to a leaf
// threshold (worker pool, oneTBB), and as a flat index space (range executor). The answer is
// known: there are 148,933 primes below 2,000,000 (kPrimesBelowTwoMillion).
//
// is_prime() uses trial division by 6k±1 below 2^32, because its cost grows with sqrt(n), which
// gives the schedulers a skewed per-item cost to balance. Above 2^32 trial division would take up
// to 2^31 divisions per call, so there it switches to a deterministic Miller-Rabin test (the first
// twelve primes as bases are exact for all n < 2^64).
#pragma once

#include <cstdint>
#include <utility>

namespace wsindex::core {

inline constexpr std::uint64_t kPrimesBelowTwoMillion = 148'933;

namespace detail {

// GCC and Clang have a 128-bit integer; __extension__ keeps -Wpedantic quiet about it.
__extension__ using Uint128 = unsigned __int128;

constexpr std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
    return static_cast<std::uint64_t>(static_cast<Uint128>(a) * b % m);
}

constexpr std::uint64_t pow_mod(std::uint64_t base, std::uint64_t exp, std::uint64_t m) {
    std::uint64_t result = 1;
    base %= m;
    while (exp > 0) {
        if (exp & 1) result = mul_mod(result, base, m);
        base = mul_mod(base, base, m);
        exp >>= 1;
    }
    return result;
}

// Miller-Rabin for odd n > 37 not divisible by small primes. Bases 2..37 are deterministic for
// n < 3.3e24 (Sorenson & Webster 2015), which covers every uint64_t.
constexpr bool miller_rabin(std::uint64_t n) {
    std::uint64_t d = n - 1;
    int s = 0;
    while ((d & 1) == 0) {
        d >>= 1;
        ++s;
    }
    for (std::uint64_t a : {2u, 3u, 5u, 7u, 11u, 13u, 17u, 19u, 23u, 29u, 31u, 37u}) {
        std::uint64_t x = pow_mod(a, d, n);
        if (x == 1 || x == n - 1) continue;
        bool composite = true;
        for (int r = 1; r < s; ++r) {
            x = mul_mod(x, x, n);
            if (x == n - 1) {
                composite = false;
                break;
            }
        }
        if (composite) return false;
    }
    return true;
}

}  // namespace detail

// Any thread. True when n is prime. Cost ~sqrt(n)/3 divisions for n < 2^32, then ~1 µs.
constexpr bool is_prime(std::uint64_t n) {
    if (n < 4) return n >= 2;
    if (n % 2 == 0 || n % 3 == 0) return false;
    if (n >= (std::uint64_t{1} << 32)) {
        for (std::uint64_t p : {5u, 7u, 11u, 13u, 17u, 19u, 23u, 29u, 31u, 37u}) {
            if (n % p == 0) return false;
        }
        return detail::miller_rabin(n);
    }
    // i <= 65537 here, so i * i cannot overflow.
    for (std::uint64_t i = 5; i * i <= n; i += 6) {
        if (n % i == 0 || n % (i + 2) == 0) return false;
    }
    return true;
}

// Any thread. The number of primes in [lo, hi); 0 when hi <= lo. The sequential baseline.
constexpr std::uint64_t count_primes(std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t count = 0;
    for (std::uint64_t n = lo; n < hi; ++n) count += is_prime(n) ? 1 : 0;
    return count;
}

// The work item of the recursive-bisection form: a half-open interval [lo, hi). Trivially
// copyable and 16 bytes, so it can be stored by value wherever the scheduler allows.
struct PrimeRange {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;

    [[nodiscard]] constexpr std::uint64_t size() const { return hi > lo ? hi - lo : 0; }
    // A leaf is counted directly; threshold 0 is treated as 1 so that bisection always ends.
    [[nodiscard]] constexpr bool is_leaf(std::uint64_t threshold) const {
        return size() <= (threshold == 0 ? 1 : threshold);
    }
    // The two halves [lo, mid) and [mid, hi); the first gets the smaller half for odd sizes.
    [[nodiscard]] constexpr std::pair<PrimeRange, PrimeRange> split() const {
        const std::uint64_t mid = lo + size() / 2;
        return {PrimeRange{lo, mid}, PrimeRange{mid, hi}};
    }
    [[nodiscard]] constexpr std::uint64_t count() const { return count_primes(lo, hi); }
};

}  // namespace wsindex::core
