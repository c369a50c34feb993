# Warnings live on an INTERFACE target that every project target links privately, so they never
# leak to consumers and packagers are never forced into -Werror.
add_library(wsindex_warnings INTERFACE)
add_library(wsindex::warnings ALIAS wsindex_warnings)
target_compile_options(wsindex_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
    -Woverloaded-virtual -Wimplicit-fallthrough
    # Designated initializers ({.workers = 2}) leave the other members defaulted on purpose.
    -Wno-missing-field-initializers
    # GCC 12 reports false -Wrestrict/-Wnull-dereference positives inside libstdc++ at -O2
    # (GCC PR 105329), so those two stay off.
    $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>
    $<$<BOOL:${WSINDEX_WERROR}>:-Werror>)
