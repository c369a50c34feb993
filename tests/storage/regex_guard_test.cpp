// regex_refusal: runaway patterns are refused, ordinary ones pass and compile quickly.
#include "storage/regex_guard.hpp"

#include <gtest/gtest.h>
#include <regex.h>
#include <time.h>

#include <chrono>
#include <string>

namespace wsindex::storage {
namespace {

bool refused(const std::string& pattern) { return regex_refusal(pattern).has_value(); }

TEST(RegexGuard, OrdinaryPatternsPass) {
    for (const char* p : {"", "^util\\.(c|h)pp$", "report", "a{1000}", "[[:alpha:]]{3,5}x", "x{2,}",
                          "(ab|cd){10}", "[]a{}]{50}", "{", "a{", "a{x}", "a{1,2", "\\{9999\\}",
                          "(unclosed", "unopened)", "\\.(jpe?g|png)$"}) {
        EXPECT_FALSE(refused(p)) << p << ": " << *regex_refusal(p);
    }
}

TEST(RegexGuard, RunawayRepetitionsAreRefused) {
    for (const char* p :
         {"(a{32767}){32767}", "((a{100}){100}){10}", "a{20001}", "a{10}{10}{10}{10}{10}",
          "(a{1000}){30,}", "(x|(y{200}){200})", "((((a{30}){30}){30})"}) {
        const auto why = regex_refusal(p);
        ASSERT_TRUE(why.has_value()) << p;
        EXPECT_NE(why->find("repetitions"), std::string::npos) << *why;
    }
    // Just under and just over the bound: one count decides.
    EXPECT_FALSE(refused("(ab){10000}"));
    EXPECT_TRUE(refused("(ab){10001}"));
}

TEST(RegexGuard, BackReferencesAndLongPatternsAreRefused) {
    EXPECT_TRUE(refused("(a|aa)*\\1"));
    EXPECT_TRUE(refused("(x)(y)\\2"));
    EXPECT_FALSE(refused("\\\\1"));  // an escaped backslash, then a literal 1
    EXPECT_FALSE(refused(std::string(kMaxRegexBytes, 'a')));
    EXPECT_TRUE(refused(std::string(kMaxRegexBytes + 1, 'a')));
}

// This thread's CPU time: what regcomp costs, whatever else the machine runs meanwhile.
std::chrono::nanoseconds thread_cpu_time() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// What passes is cheap for regcomp itself: the largest accepted expansions compile fast. Timed
// in CPU time, not wall time, so a loaded machine cannot fail it.
TEST(RegexGuard, AcceptedPatternsCompileQuickly) {
    for (const char* p : {"(ab){10000}", "((a{100}){100})", "[a-z]{19999}", "(a|b|c){6666}"}) {
        ASSERT_FALSE(refused(p)) << p;
        regex_t re;
        const auto start = thread_cpu_time();
        const int rc = ::regcomp(&re, p, REG_EXTENDED | REG_NOSUB);
        const auto took = thread_cpu_time() - start;
        if (rc == 0) ::regfree(&re);
        EXPECT_LT(took, std::chrono::seconds(2)) << p;
    }
}

}  // namespace
}  // namespace wsindex::storage
