// Base64 (RFC 4648 section 4, standard alphabet, with padding) for the lossless byte encoding.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wsindex::ipc {

std::string base64_encode(std::string_view bytes);

// Strict: only the standard alphabet, length a multiple of 4, '=' only as final padding, and
// unused trailing bits zero — so every byte string has exactly one accepted encoding.
// nullopt on any violation.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace wsindex::ipc
