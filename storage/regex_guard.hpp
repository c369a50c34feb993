// regex_refusal: which extended regexes the index refuses to compile or run, and why.
//
// Patterns come from any local user (wsindex.Find with match "regex") and glibc's regcomp and
// regexec trust them: a 17-byte pattern, "(a{32767}){32767}", makes regcomp expand the counted
// repetitions into an automaton of a billion states (measured: 2 GB and still growing after
// 20 s), and back-references ("(a|aa)*\1") make regexec backtrack, polynomially to
// exponentially in the name's length, for every name in the index. Refused here:
//   - patterns longer than kMaxRegexBytes;
//   - back-references \1 .. \9 (a GNU extension to POSIX EREs; nothing else needs backtracking);
//   - patterns whose counted repetitions ({n}, {m,n}, {m,}, and +) expand, nested ones
//     multiplied, to more than kMaxRegexExpansion atoms: a conservative over-estimate of the
//     automaton regcomp builds, about 200 bytes of it per atom.
// What passes is an ERE of bounded size, compiled in milliseconds and matched in time linear
// in the name. Pure function of the text; no regcomp call.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace wsindex::storage {

inline constexpr std::size_t kMaxRegexBytes = 4096;
inline constexpr std::size_t kMaxRegexExpansion = 20000;

// Why `pattern` is refused ("has a back-reference (\1); ..."), or nullopt when it may be compiled.
std::optional<std::string> regex_refusal(std::string_view pattern);

}  // namespace wsindex::storage
