// fs_type_name: a table of the magics in <linux/magic.h> (plus a few it lacks) and their names.
#include "core/fs_types.hpp"

#include <array>
#include <utility>

namespace wsindex::core {

namespace {

// Values from the kernel's include/uapi/linux/magic.h and fs/*/ sources; names as in
// /proc/filesystems, which is what PRUNEFS lists.
constexpr std::array<std::pair<std::uint64_t, std::string_view>, 40> kMagics{{
    {0x9fa0, "proc"},        {0x62656572, "sysfs"},
    {0x01021994, "tmpfs"},   {0x858458f6, "ramfs"},
    {0x6969, "nfs"},         {0x65735546, "fuse"},
    {0x65735543, "fusectl"}, {0x1373, "devfs"},
    {0x1cd1, "devpts"},      {0x27e0eb, "cgroup"},
    {0x63677270, "cgroup2"}, {0x64626720, "debugfs"},
    {0x74726163, "tracefs"}, {0x73636673, "securityfs"},
    {0xcafe4a11, "bpf"},     {0x42494e4d, "binfmt_misc"},
    {0x6e736673, "nsfs"},    {0x50495045, "pipefs"},
    {0x534f434b, "sockfs"},  {0x67596969, "rpc_pipefs"},
    {0x0187, "autofs"},      {0x9660, "iso9660"},
    {0x15013346, "udf"},     {0x517b, "smbfs"},
    {0xfe534d42, "smb2"},    {0xff534d42, "cifs"},
    {0x564c, "ncpfs"},       {0x73757245, "coda"},
    {0x5346414f, "afs"},     {0x00c36400, "ceph"},
    {0x0bd00bd0, "lustre"},  {0xf15f, "ecryptfs"},
    {0x794c7630, "overlay"}, {0xef53, "ext4"},  // ext2/3/4 share one magic
    {0x58465342, "xfs"},     {0x9123683e, "btrfs"},
    {0x2fc12fc1, "zfs"},     {0x4d44, "vfat"},
    {0x5346544e, "ntfs"},    {0xf2f52010, "f2fs"},
}};

}  // namespace

std::string_view fs_type_name(std::uint64_t magic) {
    for (const auto& [m, name] : kMagics) {
        if (m == magic) return name;
    }
    return "unknown";
}

}  // namespace wsindex::core
