// WSINDEX_SKIP_OR_FAIL_IN_CI(): what a test does when a prerequisite is missing (root, a tool,
// a kernel feature): it skips on a developer's machine, and fails under CI, so CI cannot pass by
// skipping. Used as GTEST_SKIP() is, with the reason streamed in:
//     if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root to drop privileges";
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace wsindex::test {

// CI is set (CI=true, as CI services and .ci/run set it), and not to "false" or "0".
inline bool under_ci() {
    const char* ci = std::getenv("CI");
    if (ci == nullptr) return false;
    const std::string_view value(ci);
    return !value.empty() && value != "false" && value != "0";
}

inline ::testing::TestPartResult::Type missing_prerequisite_result() {
    return under_ci() ? ::testing::TestPartResult::kFatalFailure : ::testing::TestPartResult::kSkip;
}

inline const char* missing_prerequisite_note() {
    return under_ci() ? "A prerequisite is missing, and CI=true turns the skip into a failure" : "";
}

}  // namespace wsindex::test

// Returns from the test function (as GTEST_SKIP and FAIL do); the streamed text is the reason.
#define WSINDEX_SKIP_OR_FAIL_IN_CI()                                    \
    return GTEST_MESSAGE_(::wsindex::test::missing_prerequisite_note(), \
                          ::wsindex::test::missing_prerequisite_result())
