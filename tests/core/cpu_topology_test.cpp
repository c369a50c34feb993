// Tests for CpuTopology: the CPU list format, fake sysfs trees for each source, and this machine.
#include "core/cpu_topology.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace wsindex::core {
namespace {

namespace fs = std::filesystem;

// A throwaway directory shaped like /sys, removed when the test ends.
class FakeSysfs {
  public:
    FakeSysfs() {
        std::string pattern = (fs::temp_directory_path() / "wsindex-sysfs-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        root_ = pattern;
    }
    ~FakeSysfs() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    FakeSysfs(const FakeSysfs&) = delete;
    FakeSysfs& operator=(const FakeSysfs&) = delete;

    void write(const std::string& relative, const std::string& text) const {
        const fs::path path = root_ / relative;
        fs::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }
    void cpu_file(unsigned cpu, const std::string& relative, const std::string& text) const {
        write("devices/system/cpu/cpu" + std::to_string(cpu) + "/" + relative, text);
    }
    [[nodiscard]] std::string root() const { return root_.string(); }

  private:
    fs::path root_;
};

std::vector<unsigned> ids_of_class(const CpuTopology& topo, unsigned cls) {
    std::vector<unsigned> ids;
    for (const CpuInfo& c : topo.cpus()) {
        if (c.speed_class == cls) ids.push_back(c.id);
    }
    return ids;
}

TEST(CpuTopology, ParsesKernelCpuLists) {
    EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_EQ(parse_cpu_list("5"), (std::vector<unsigned>{5}));
    EXPECT_EQ(parse_cpu_list("2,0-1"), (std::vector<unsigned>{0, 1, 2}));
    EXPECT_TRUE(parse_cpu_list("").empty());
    EXPECT_TRUE(parse_cpu_list("\n").empty());
    EXPECT_TRUE(parse_cpu_list("garbage").empty());
    EXPECT_TRUE(parse_cpu_list("3-1").empty());
    EXPECT_TRUE(parse_cpu_list("0-").empty());
    EXPECT_TRUE(parse_cpu_list("0,,1").empty());
}

TEST(CpuTopology, FormatsCpuListsCompactly) {
    EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
    EXPECT_EQ(format_cpu_list({}), "");
    EXPECT_EQ(format_cpu_list({7}), "7");
    EXPECT_EQ(parse_cpu_list(format_cpu_list({0, 2, 4, 5, 6})),
              (std::vector<unsigned>{0, 2, 4, 5, 6}));
}

TEST(CpuTopology, HybridIntelEfficiencyCoresAreTheSlowClass) {
    FakeSysfs sys;
    sys.write("devices/system/cpu/online", "0-5\n");
    sys.write("devices/cpu_core/cpus", "0-3\n");
    sys.write("devices/cpu_atom/cpus", "4-5\n");
    // Max frequencies that would rank differently must not override the PMU lists.
    for (unsigned c = 0; c < 6; ++c) sys.cpu_file(c, "cpufreq/cpuinfo_max_freq", "4000000\n");
    const CpuTopology topo = CpuTopology::read(sys.root());
    ASSERT_EQ(topo.cpus().size(), 6u);
    EXPECT_EQ(topo.class_source(), "cpu_core/cpu_atom");
    EXPECT_EQ(topo.class_count(), 2u);
    EXPECT_TRUE(topo.heterogeneous());
    EXPECT_EQ(ids_of_class(topo, 0), (std::vector<unsigned>{4, 5}));
    EXPECT_EQ(ids_of_class(topo, 1), (std::vector<unsigned>{0, 1, 2, 3}));
    EXPECT_EQ(topo.find(0)->kind, CoreKind::Performance);
    EXPECT_EQ(topo.find(5)->kind, CoreKind::Efficiency);
    EXPECT_EQ(topo.speed_class(4), 0u);
    EXPECT_EQ(topo.speed_class(1), 1u);
    EXPECT_EQ(topo.speed_class(-1), 0u);  // sched_getcpu() failure: unknown ranks slowest
    EXPECT_EQ(topo.find(6), nullptr);
    EXPECT_NE(topo.describe().find("class 0 = 4-5"), std::string::npos) << topo.describe();
}

TEST(CpuTopology, CpuCapacityGivesClassesOnBigLittle) {
    FakeSysfs sys;
    sys.write("devices/system/cpu/online", "0-7\n");
    for (unsigned c = 0; c < 8; ++c) {
        sys.cpu_file(c, "cpu_capacity", c < 4 ? "446\n" : "1024\n");
        sys.cpu_file(c, "topology/core_id", std::to_string(c) + "\n");
        sys.cpu_file(c, "topology/physical_package_id", "0\n");
    }
    const CpuTopology topo = CpuTopology::read(sys.root());
    EXPECT_EQ(topo.class_source(), "cpu_capacity");
    EXPECT_EQ(topo.class_count(), 2u);
    EXPECT_EQ(ids_of_class(topo, 0), (std::vector<unsigned>{0, 1, 2, 3}));
    EXPECT_EQ(topo.find(7)->capacity, 1024u);
    EXPECT_EQ(topo.find(7)->kind, CoreKind::Unknown);
    EXPECT_EQ(topo.physical_cores(), 8u);
}

TEST(CpuTopology, MaxFrequencyIsTheLastResort) {
    FakeSysfs sys;
    sys.write("devices/system/cpu/online", "0-3\n");
    const char* freqs[] = {"3000000\n", "3500000\n", "3000000\n", "garbage\n"};
    for (unsigned c = 0; c < 4; ++c) {
        sys.cpu_file(c, "cpu_capacity", "1024\n");  // the same everywhere: no distinction
        sys.cpu_file(c, "cpufreq/cpuinfo_max_freq", freqs[c]);
    }
    const CpuTopology topo = CpuTopology::read(sys.root());
    EXPECT_EQ(topo.class_source(), "cpuinfo_max_freq");
    // Three distinct keys: unknown (0, from the garbled file), 3.0 GHz and 3.5 GHz.
    EXPECT_EQ(topo.class_count(), 3u);
    EXPECT_EQ(topo.find(3)->max_freq_khz, 0u);
    EXPECT_EQ(topo.speed_class(3), 0u);
    EXPECT_EQ(topo.speed_class(0), 1u);
    EXPECT_EQ(topo.speed_class(1), 2u);
}

TEST(CpuTopology, UniformMachineHasOneClass) {
    FakeSysfs sys;
    sys.write("devices/system/cpu/online", "0-1,4\n");  // holes: CPUs 2-3 offline
    for (unsigned c : {0u, 1u, 4u}) {
        sys.cpu_file(c, "cpu_capacity", "1024\n");
        sys.cpu_file(c, "topology/core_id", "0\n");  // SMT siblings of one core
        sys.cpu_file(c, "topology/physical_package_id", "0\n");
    }
    const CpuTopology topo = CpuTopology::read(sys.root());
    ASSERT_EQ(topo.cpus().size(), 3u);
    EXPECT_EQ(topo.cpus()[2].id, 4u);
    EXPECT_EQ(topo.find(2), nullptr);
    EXPECT_EQ(topo.class_source(), "uniform");
    EXPECT_EQ(topo.class_count(), 1u);
    EXPECT_FALSE(topo.heterogeneous());
    EXPECT_EQ(topo.physical_cores(), 1u);
}

TEST(CpuTopology, MissingSysfsFallsBackToSysconf) {
    FakeSysfs sys;  // empty tree
    const CpuTopology topo = CpuTopology::read(sys.root());
    EXPECT_EQ(topo.cpus().size(), static_cast<std::size_t>(::sysconf(_SC_NPROCESSORS_ONLN)));
    EXPECT_EQ(topo.class_count(), 1u);
    for (const CpuInfo& c : topo.cpus()) {
        EXPECT_EQ(c.capacity, 0u);
        EXPECT_EQ(c.core_id, -1);
    }
}

// This machine, through the real /sys: the numbers must agree with what libc and the kernel say.
TEST(CpuTopology, ReadsThisMachineSensibly) {
    const CpuTopology topo = CpuTopology::read();
    std::cout << "[ topology ] " << topo.describe() << "\n[ topology ] " << topo.to_json() << "\n";
    RecordProperty("topology", topo.describe());

    ASSERT_FALSE(topo.cpus().empty());
    EXPECT_EQ(topo.cpus().size(), static_cast<std::size_t>(::sysconf(_SC_NPROCESSORS_ONLN)));
    EXPECT_EQ(topo.cpus().size(), std::thread::hardware_concurrency());
    for (std::size_t i = 1; i < topo.cpus().size(); ++i) {
        EXPECT_LT(topo.cpus()[i - 1].id, topo.cpus()[i].id);
    }

    // We run somewhere, and only on online CPUs.
    ASSERT_FALSE(topo.allowed().empty());
    for (unsigned c : topo.allowed()) EXPECT_NE(topo.find(static_cast<int>(c)), nullptr) << c;
    EXPECT_NE(topo.find(::sched_getcpu()), nullptr);

    EXPECT_GE(topo.class_count(), 1u);
    for (const CpuInfo& c : topo.cpus()) EXPECT_LT(c.speed_class, topo.class_count());
    EXPECT_GE(topo.physical_cores(), 1u);
    EXPECT_LE(topo.physical_cores(), topo.cpus().size());

    // The source must match what sysfs exposes here.
    const bool intel_hybrid =
        fs::exists("/sys/devices/cpu_core/cpus") && fs::exists("/sys/devices/cpu_atom/cpus");
    if (intel_hybrid) {
        EXPECT_EQ(topo.class_source(), "cpu_core/cpu_atom");
    } else {
        EXPECT_NE(topo.class_source(), "cpu_core/cpu_atom");
        for (const CpuInfo& c : topo.cpus()) EXPECT_EQ(c.kind, CoreKind::Unknown);
    }
    if (topo.class_source() == "uniform") {
        EXPECT_EQ(topo.class_count(), 1u);
    }
    for (const CpuInfo& c : topo.cpus()) {
        const fs::path capacity =
            "/sys/devices/system/cpu/cpu" + std::to_string(c.id) + "/cpu_capacity";
        if (!fs::exists(capacity)) {
            EXPECT_EQ(c.capacity, 0u);
        }
        if (c.capacity != 0) {
            EXPECT_LE(c.capacity, 1024u);
        }
    }
    EXPECT_EQ(topo.to_json().front(), '{');
    EXPECT_EQ(topo.to_json().back(), '}');
}

}  // namespace
}  // namespace wsindex::core
