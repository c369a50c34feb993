// CpuTopology: reads online CPUs and their speed classes from sysfs (see cpu_topology.hpp).
#include "core/cpu_topology.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

namespace wsindex::core {

namespace {

// The whole of a small sysfs file, or nullopt when it does not exist or cannot be read.
std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return std::nullopt;
    return text;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

template <class Int>
std::optional<Int> parse_int(std::string_view s) {
    s = trim(s);
    Int value{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return value;
}

template <class Int>
std::optional<Int> read_int(const std::string& path) {
    const auto text = read_file(path);
    if (!text) return std::nullopt;
    return parse_int<Int>(*text);
}

std::vector<unsigned> read_cpu_list(const std::string& path) {
    const auto text = read_file(path);
    return text ? parse_cpu_list(*text) : std::vector<unsigned>{};
}

// Gives every CPU the rank of its key among the distinct keys (ascending), and returns how many
// distinct keys there were. Used for capacity and max frequency, where larger means faster.
template <class Key>
unsigned assign_classes(std::vector<CpuInfo>& cpus, Key key_of) {
    std::set<decltype(key_of(cpus.front()))> keys;
    for (const CpuInfo& c : cpus) keys.insert(key_of(c));
    for (CpuInfo& c : cpus) {
        c.speed_class = static_cast<unsigned>(std::distance(keys.begin(), keys.find(key_of(c))));
    }
    return static_cast<unsigned>(keys.size());
}

void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        out += ch;
    }
    out += '"';
}

}  // namespace

std::string_view to_string(CoreKind kind) {
    switch (kind) {
        case CoreKind::Performance:
            return "performance";
        case CoreKind::Efficiency:
            return "efficiency";
        case CoreKind::Unknown:
            break;
    }
    return "unknown";
}

std::vector<unsigned> parse_cpu_list(std::string_view text) {
    std::set<unsigned> cpus;
    text = trim(text);
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        const std::size_t dash = item.find('-');
        const auto first = parse_int<unsigned>(item.substr(0, dash));
        const auto last =
            dash == std::string_view::npos ? first : parse_int<unsigned>(item.substr(dash + 1));
        // A malformed or absurd range means we do not understand the file: treat it as absent.
        if (!first || !last || *last < *first || *last - *first > 65536) return {};
        for (unsigned c = *first; c <= *last; ++c) cpus.insert(c);
    }
    return {cpus.begin(), cpus.end()};
}

std::string format_cpu_list(const std::vector<unsigned>& cpus) {
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

CpuTopology CpuTopology::read(const std::string& sysfs_root) {
    CpuTopology topo;
    const std::string cpu_dir = sysfs_root + "/devices/system/cpu";

    std::vector<unsigned> online = read_cpu_list(cpu_dir + "/online");
    if (online.empty()) {
        const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < std::max(n, 1L); ++i) online.push_back(static_cast<unsigned>(i));
    }

    const std::vector<unsigned> p_cores = read_cpu_list(sysfs_root + "/devices/cpu_core/cpus");
    const std::vector<unsigned> e_cores = read_cpu_list(sysfs_root + "/devices/cpu_atom/cpus");
    const std::set<unsigned> p_set(p_cores.begin(), p_cores.end());
    const std::set<unsigned> e_set(e_cores.begin(), e_cores.end());

    for (unsigned id : online) {
        CpuInfo info;
        info.id = id;
        const std::string base = cpu_dir + "/cpu" + std::to_string(id);
        if (p_set.count(id) != 0) info.kind = CoreKind::Performance;
        if (e_set.count(id) != 0) info.kind = CoreKind::Efficiency;
        info.capacity = read_int<std::uint32_t>(base + "/cpu_capacity").value_or(0);
        info.max_freq_khz = read_int<std::uint64_t>(base + "/cpufreq/cpuinfo_max_freq").value_or(0);
        info.core_id = read_int<int>(base + "/topology/core_id").value_or(-1);
        info.package_id = read_int<int>(base + "/topology/physical_package_id").value_or(-1);
        topo.cpus_.push_back(info);
    }

    // Speed classes from the first source that tells CPUs apart (see the header). Only an order.
    auto& cpus = topo.cpus_;
    const bool has_kinds = !p_set.empty() && !e_set.empty();
    if (has_kinds) {
        // Unknown kind (a CPU in neither list) ranks with the efficiency cores: never assume fast.
        topo.class_count_ = assign_classes(
            cpus, [](const CpuInfo& c) { return c.kind == CoreKind::Performance ? 1 : 0; });
        topo.class_source_ = "cpu_core/cpu_atom";
    } else if (assign_classes(cpus, [](const CpuInfo& c) { return c.capacity; }) > 1) {
        topo.class_count_ = assign_classes(cpus, [](const CpuInfo& c) { return c.capacity; });
        topo.class_source_ = "cpu_capacity";
    } else if (assign_classes(cpus, [](const CpuInfo& c) { return c.max_freq_khz; }) > 1) {
        topo.class_count_ = assign_classes(cpus, [](const CpuInfo& c) { return c.max_freq_khz; });
        topo.class_source_ = "cpuinfo_max_freq";
    } else {
        for (CpuInfo& c : cpus) c.speed_class = 0;
        topo.class_count_ = 1;
        topo.class_source_ = "uniform";
    }

    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (::sched_getaffinity(0, sizeof(mask), &mask) == 0) {
        for (unsigned c = 0; c < CPU_SETSIZE; ++c) {
            if (CPU_ISSET(c, &mask)) topo.allowed_.push_back(c);
        }
    }
    return topo;
}

CpuTopology CpuTopology::from_cpus(std::vector<CpuInfo> cpus, std::string class_source) {
    CpuTopology topo;
    std::sort(cpus.begin(), cpus.end(),
              [](const CpuInfo& a, const CpuInfo& b) { return a.id < b.id; });
    std::set<unsigned> classes;
    for (const CpuInfo& c : cpus) classes.insert(c.speed_class);
    topo.cpus_ = std::move(cpus);
    topo.class_count_ = std::max<unsigned>(1, static_cast<unsigned>(classes.size()));
    topo.class_source_ = std::move(class_source);
    return topo;
}

const CpuInfo* CpuTopology::find(int cpu) const {
    if (cpu < 0) return nullptr;
    const auto it = std::lower_bound(cpus_.begin(), cpus_.end(), static_cast<unsigned>(cpu),
                                     [](const CpuInfo& c, unsigned id) { return c.id < id; });
    return it != cpus_.end() && it->id == static_cast<unsigned>(cpu) ? &*it : nullptr;
}

unsigned CpuTopology::speed_class(int cpu) const {
    const CpuInfo* info = find(cpu);
    return info != nullptr ? info->speed_class : 0;
}

std::size_t CpuTopology::physical_cores() const {
    std::set<std::pair<int, int>> cores;
    for (const CpuInfo& c : cpus_) {
        if (c.core_id < 0) return cpus_.size();
        cores.insert({c.package_id, c.core_id});
    }
    return cores.size();
}

std::string CpuTopology::describe() const {
    std::vector<unsigned> ids;
    for (const CpuInfo& c : cpus_) ids.push_back(c.id);
    std::ostringstream out;
    out << cpus_.size() << " online CPUs (" << format_cpu_list(ids) << "), " << physical_cores()
        << " physical cores, " << allowed_.size() << " allowed (" << format_cpu_list(allowed_)
        << "), " << class_count_ << " speed class" << (class_count_ == 1 ? "" : "es") << " ("
        << class_source_ << ")";
    if (heterogeneous()) {
        std::map<unsigned, std::vector<unsigned>> by_class;
        for (const CpuInfo& c : cpus_) by_class[c.speed_class].push_back(c.id);
        for (const auto& [cls, members] : by_class) {
            out << (cls == 0 ? ": " : ", ") << "class " << cls << " = " << format_cpu_list(members);
        }
    }
    return out.str();
}

std::string CpuTopology::to_json() const {
    std::string out = "{\"class_source\":";
    append_json_string(out, class_source_);
    out += ",\"class_count\":" + std::to_string(class_count_);
    out += ",\"physical_cores\":" + std::to_string(physical_cores());
    out += ",\"allowed\":";
    append_json_string(out, format_cpu_list(allowed_));
    out += ",\"cpus\":[";
    for (std::size_t i = 0; i < cpus_.size(); ++i) {
        const CpuInfo& c = cpus_[i];
        if (i > 0) out += ',';
        out += "{\"id\":" + std::to_string(c.id) + ",\"kind\":";
        append_json_string(out, to_string(c.kind));
        out += ",\"capacity\":" + std::to_string(c.capacity);
        out += ",\"max_freq_khz\":" + std::to_string(c.max_freq_khz);
        out += ",\"core_id\":" + std::to_string(c.core_id);
        out += ",\"package_id\":" + std::to_string(c.package_id);
        out += ",\"speed_class\":" + std::to_string(c.speed_class) + "}";
    }
    out += "]}";
    return out;
}

}  // namespace wsindex::core
