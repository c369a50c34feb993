// CpuTopology: which CPUs are online and, where sysfs says so, which are faster or slower.
//
// The schedulers never need this to be correct: stealing measures speed by itself, and no speed
// ratio is ever configured. The topology is *reported* (benchmarks, `wsctl status`) and used only
// as a tie-break when a range-executor thief picks among equally loaded victims (see
// range_executor.hpp). Where the kernel exposes a distinction we keep it as an ordinal
// `speed_class` (0 = slowest class), from the first of these sources that distinguishes CPUs:
//   1. Intel hybrid PMUs: /sys/devices/cpu_core/cpus (P-cores) and /sys/devices/cpu_atom/cpus
//      (E-cores). Efficiency cores get class 0.
//   2. /sys/devices/system/cpu/cpuN/cpu_capacity (arm64 big.LITTLE, some x86 kernels; the
//      biggest core is 1024). Larger capacity, higher class.
//   3. /sys/devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq (kHz). Higher max, higher class.
// A machine where none of them differs (or that exposes none, like most VMs) has one class.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wsindex::core {

enum class CoreKind : std::uint8_t { Unknown, Performance, Efficiency };

std::string_view to_string(CoreKind kind);

struct CpuInfo {
    unsigned id = 0;  // the kernel's CPU number (cpuN)
    CoreKind kind = CoreKind::Unknown;
    std::uint32_t capacity = 0;      // cpu_capacity (1024 = biggest core); 0 when not exposed
    std::uint64_t max_freq_khz = 0;  // cpufreq cpuinfo_max_freq; 0 when not exposed
    int core_id = -1;                // topology/core_id; -1 when not exposed
    int package_id = -1;             // topology/physical_package_id; -1 when not exposed
    unsigned speed_class = 0;        // 0 = slowest class; only an order, never a ratio
};

class CpuTopology {
  public:
    // Any thread. Reads the topology under `sysfs_root` ("/sys" normally; tests pass a fake
    // tree). Never fails: a missing or unreadable file leaves that field unknown, and a missing
    // online list falls back to sysconf(_SC_NPROCESSORS_ONLN) CPUs numbered from 0. The affinity
    // mask (allowed()) is always this process's own, whatever the root.
    static CpuTopology read(const std::string& sysfs_root = "/sys");

    // Any thread. A topology from given CPUs (their speed_class values are kept as they are),
    // with an empty affinity mask: for tests that need a machine this one is not.
    static CpuTopology from_cpus(std::vector<CpuInfo> cpus, std::string class_source);

    // Online CPUs in ascending id order.
    [[nodiscard]] const std::vector<CpuInfo>& cpus() const { return cpus_; }
    // CPUs this process may run on (sched_getaffinity), ascending; empty if the call failed.
    [[nodiscard]] const std::vector<unsigned>& allowed() const { return allowed_; }
    // The CpuInfo for a kernel CPU number, or nullptr when it is not online (or cpu < 0, which is
    // what sched_getcpu() returns on failure).
    [[nodiscard]] const CpuInfo* find(int cpu) const;
    // speed_class of a CPU; 0 for an unknown CPU, so unknown never looks faster than known.
    [[nodiscard]] unsigned speed_class(int cpu) const;
    // Number of distinct speed classes (1 on a uniform machine).
    [[nodiscard]] unsigned class_count() const { return class_count_; }
    [[nodiscard]] bool heterogeneous() const { return class_count_ > 1; }
    // Which sysfs source gave the classes: "cpu_core/cpu_atom", "cpu_capacity",
    // "cpuinfo_max_freq", or "uniform".
    [[nodiscard]] const std::string& class_source() const { return class_source_; }
    // Number of distinct physical cores (core_id, package_id) among online CPUs; equals
    // cpus().size() when core ids are not exposed.
    [[nodiscard]] std::size_t physical_cores() const;

    // One line for logs and benchmark headers, e.g.
    // "2 online CPUs (0-1), 2 allowed, 1 speed class (uniform)".
    [[nodiscard]] std::string describe() const;
    // A JSON object with every field, for wsctl status and the benchmarks.
    [[nodiscard]] std::string to_json() const;

  private:
    std::vector<CpuInfo> cpus_;
    std::vector<unsigned> allowed_;
    unsigned class_count_ = 1;
    std::string class_source_ = "uniform";
};

// Any thread. Parses the kernel's CPU list format ("0-3,8,10-11\n") into ascending, unique
// numbers. Returns an empty vector for malformed text (so a garbled file reads as "not exposed").
std::vector<unsigned> parse_cpu_list(std::string_view text);

// Any thread. The inverse: ascending numbers to the compact list form ("0-3,8").
std::string format_cpu_list(const std::vector<unsigned>& cpus);

}  // namespace wsindex::core
