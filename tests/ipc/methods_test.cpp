// Method parameters and replies: round trips through JSON text, defaults, validation messages.
#include "ipc/methods.hpp"

#include <gtest/gtest.h>

#include <string>

#include "ipc/protocol.hpp"

namespace wsindex::ipc {
namespace {

using nlohmann::json;

// to_json, then dump and parse (the wire), then from_json.
template <class T>
T through_wire(const T& value) {
    const auto text = dump_json(to_json(value));
    EXPECT_TRUE(text.has_value());
    auto decoded = from_json<T>(json::parse(text.value_or("{}")));
    EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().to_string());
    return decoded ? decoded.value() : T{};
}

template <class T>
Error expect_invalid(const json& parameters, std::string_view field) {
    auto decoded = from_json<T>(parameters);
    EXPECT_FALSE(decoded.ok()) << parameters.dump();
    if (decoded.ok()) return {};
    EXPECT_EQ(decoded.error().kind, ErrorKind::InvalidParameter);
    EXPECT_NE(decoded.error().message.find("'" + std::string(field) + "'"), std::string::npos)
        << decoded.error().message;
    EXPECT_EQ(decoded.error().details.value("parameter", ""), std::string(field));
    return decoded.error();
}

TEST(Methods, FindParamsRoundTrip) {
    FindParams p;
    p.pattern = std::string("na\xFFme");
    p.match = MatchMode::Glob;
    p.case_insensitive = true;
    p.types = "fd";
    p.min_size = 10;
    p.max_size = 1u << 30;
    p.newer_ns = -5;
    p.under = std::string("/home/\xFE");
    p.limit = 100;
    p.metadata = false;
    const FindParams q = through_wire(p);
    EXPECT_EQ(q.pattern, p.pattern);
    EXPECT_EQ(q.match, MatchMode::Glob);
    EXPECT_TRUE(q.case_insensitive);
    EXPECT_EQ(q.types, "fd");
    EXPECT_EQ(q.min_size, p.min_size);
    EXPECT_EQ(q.max_size, p.max_size);
    EXPECT_EQ(q.newer_ns, p.newer_ns);
    EXPECT_EQ(q.under, p.under);
    EXPECT_EQ(q.limit, 100u);
    EXPECT_FALSE(q.metadata);
    p.metadata = true;
    EXPECT_TRUE(through_wire(p).metadata);
}

TEST(Methods, FindDefaults) {
    auto p = from_json<FindParams>(json::object());
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE(p->pattern);
    EXPECT_EQ(p->match, MatchMode::Substring);
    EXPECT_EQ(p->limit, 0u);
    EXPECT_TRUE(p->types.empty());
    EXPECT_TRUE(p->metadata);  // a caller that does not say gets every field
}

TEST(Methods, FindValidationNamesTheField) {
    expect_invalid<FindParams>(json{{"limit", "ten"}}, "limit");
    expect_invalid<FindParams>(json{{"limit", -1}}, "limit");
    expect_invalid<FindParams>(json{{"limit", 1.5}}, "limit");
    expect_invalid<FindParams>(json{{"case_insensitive", 1}}, "case_insensitive");
    expect_invalid<FindParams>(json{{"metadata", "no"}}, "metadata");
    expect_invalid<FindParams>(json{{"match", "fuzzy"}, {"pattern", "x"}}, "match");
    expect_invalid<FindParams>(json{{"match", "regex"}}, "pattern");
    expect_invalid<FindParams>(json{{"types", "fz"}}, "types");
    expect_invalid<FindParams>(json{{"under", "relative/path"}}, "under");
    expect_invalid<FindParams>(json{{"under", 7}}, "under");
    expect_invalid<FindParams>(json{{"min_size", 10}, {"max_size", 5}}, "min_size");
    expect_invalid<FindParams>(json{{"pattern", {{"b64", "%%%"}}}}, "pattern");
    const Error e = expect_invalid<FindParams>(json{{"limit", "ten"}}, "limit");
    EXPECT_NE(e.message.find("got string"), std::string::npos) << e.message;
}

TEST(Methods, IntegersMayArriveAsExactFloats) {
    auto p = from_json<FindParams>(json{{"limit", 5.0}});
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->limit, 5u);
}

TEST(Methods, NonObjectParametersAreInvalid) {
    auto p = from_json<FindParams>(json::array());
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().kind, ErrorKind::InvalidParameter);
}

TEST(Methods, ScanParams) {
    ScanParams p;
    p.paths = {"/usr", std::string("/data/\x80\x81")};
    p.wait = true;
    const ScanParams q = through_wire(p);
    EXPECT_EQ(q.paths, p.paths);
    EXPECT_TRUE(q.wait);
    expect_invalid<ScanParams>(json::object(), "paths");
    expect_invalid<ScanParams>(json{{"paths", json::array()}}, "paths");
    expect_invalid<ScanParams>(json{{"paths", "/usr"}}, "paths");
    expect_invalid<ScanParams>(json{{"paths", {"/usr", 3}}}, "paths[1]");
    expect_invalid<ScanParams>(json{{"paths", {"usr"}}}, "paths[0]");
    expect_invalid<ScanParams>(json{{"paths", {"/usr"}}, {"wait", "yes"}}, "wait");
}

TEST(Methods, DuParams) {
    DuParams p;
    p.path = "/var";
    p.depth = 3;
    p.top = 20;
    const DuParams q = through_wire(p);
    EXPECT_EQ(q.path, p.path);
    EXPECT_EQ(q.depth, 3u);
    EXPECT_EQ(q.top, 20u);
    expect_invalid<DuParams>(json{{"depth", 1u << 20}}, "depth");
    expect_invalid<DuParams>(json{{"depth", "1"}}, "depth");
    expect_invalid<DuParams>(json{{"path", ""}}, "path");
}

TEST(Methods, DuChildrenAndEntryColumnsRoundTripAndAreAbsentOtherwise) {
    DuParams p;
    p.path = "/var";
    EXPECT_FALSE(to_json(p).contains("children"));  // old daemons see the request they know
    p.children = true;
    EXPECT_TRUE(through_wire(p).children);

    DuEntry plain{"/usr", 0, 100, 4096, 5, 2};
    EXPECT_FALSE(to_json(plain).contains("type"));  // without children: the reply as before
    EXPECT_FALSE(through_wire(DuReply{{plain}}).entries[0].stat.has_value());

    DuEntry file{"/usr/\xFF", 1, 7, 4096, 1, 0};
    DuEntryStat st;
    st.type = 'f';
    st.has_stat = true;
    st.size = 7;
    st.blocks = 8;
    st.mtime_ns = -5;
    st.ctime_ns = 9;
    st.mode = 0100644;
    st.uid = 1000;
    st.gid = 100;
    st.dev = 2049;
    st.ino = 1234567;
    st.nlink = 2;
    file.stat = st;
    DuEntry unread{"/usr/locked", 1, 0, 0, 0, 0};
    DuEntryStat bad;
    bad.type = 'd';
    bad.error = 13;
    unread.stat = bad;
    const DuReply back = through_wire(DuReply{{file, unread}});
    ASSERT_EQ(back.entries.size(), 2u);
    ASSERT_TRUE(back.entries[0].stat.has_value());
    const DuEntryStat& got = *back.entries[0].stat;
    EXPECT_EQ(got.type, 'f');
    EXPECT_TRUE(got.has_stat);
    EXPECT_EQ(got.blocks, 8u);
    EXPECT_EQ(got.mtime_ns, -5);
    EXPECT_EQ(got.ctime_ns, 9);
    EXPECT_EQ(got.mode, 0100644u);
    EXPECT_EQ(got.uid, 1000u);
    EXPECT_EQ(got.ino, 1234567u);
    EXPECT_EQ(got.nlink, 2u);
    ASSERT_TRUE(back.entries[1].stat.has_value());
    EXPECT_FALSE(back.entries[1].stat->has_stat);
    EXPECT_EQ(back.entries[1].stat->error, 13);
    expect_invalid<DuReply>(json{{"entries", {{{"path", "/a"}, {"type", "ff"}}}}},
                            "entries[0].type");
}

TEST(Methods, ForgetParamsAndReply) {
    ForgetParams p;
    p.root = "/gone/\xff";  // bytes, not text
    EXPECT_EQ(through_wire(p).root, p.root);
    expect_invalid<ForgetParams>(json::object(), "root");
    expect_invalid<ForgetParams>(json{{"root", "relative"}}, "root");
    expect_invalid<ForgetParams>(json{{"root", 7}}, "root");
    ForgetReply r;
    r.root = "/gone";
    r.entries = 12;
    r.dirs = 3;
    r.bytes = 4096;
    r.scans = 2;
    r.cancelled = 1;
    const ForgetReply q = through_wire(r);
    EXPECT_EQ(q.root, r.root);
    EXPECT_EQ(q.entries, 12u);
    EXPECT_EQ(q.dirs, 3u);
    EXPECT_EQ(q.bytes, 4096u);
    EXPECT_EQ(q.scans, 2u);
    EXPECT_EQ(q.cancelled, 1u);
}

TEST(Methods, SmallParams) {
    CancelParams c;
    c.scan_id = 42;
    EXPECT_EQ(through_wire(c).scan_id, 42u);
    EXPECT_FALSE(through_wire(CancelParams{}).scan_id);
    expect_invalid<CancelParams>(json{{"scan_id", "42"}}, "scan_id");
    ErrorsParams e;
    e.scan_id = 3;
    e.limit = 9;
    EXPECT_EQ(through_wire(e).scan_id, 3u);
    EXPECT_EQ(through_wire(e).limit, 9u);
    EXPECT_EQ(through_wire(ScansParams{7}).limit, 7u);
}

ScanInfo sample_scan() {
    ScanInfo s;
    s.scan_id = 9;
    s.root = std::string("/odd\xFFroot");
    s.state = ScanState::Failed;
    s.started_ns = 1700000000000000000;
    s.finished_ns = 1700000001000000000;
    s.elapsed_ms = 1000;
    s.entries = 123456;
    s.dirs = 789;
    s.errors = 2;
    s.bytes = 1ull << 40;
    s.entries_per_second = 123456.5;
    s.error = "EIO on /odd\xFFroot/x";  // text: sanitised on the way out
    return s;
}

TEST(Methods, StatusReplyRoundTrip) {
    StatusReply s;
    s.server_version = "0.1.0";
    s.pid = 77;
    s.uptime_ms = 5000;
    s.running = sample_scan();
    s.queued = {sample_scan()};
    s.queue_depth = 3;
    s.workers = {PoolWorkerStatus{1, 2, 3, 4, 5}, PoolWorkerStatus{6, 7, 8, 9, 10}};
    s.roots = {RootInfo{"/usr", 4, 99, 1000, 2000}};
    const StatusReply t = through_wire(s);
    ASSERT_TRUE(t.running);
    EXPECT_EQ(t.running->root, s.running->root);
    EXPECT_EQ(t.running->state, ScanState::Failed);
    EXPECT_EQ(t.running->bytes, 1ull << 40);
    EXPECT_EQ(t.running->error, "EIO on /odd\xEF\xBF\xBDroot/x");
    EXPECT_DOUBLE_EQ(t.running->entries_per_second, 123456.5);
    ASSERT_EQ(t.workers.size(), 2u);
    EXPECT_EQ(t.workers[1].parked_ms, 10u);
    ASSERT_EQ(t.roots.size(), 1u);
    EXPECT_EQ(t.roots[0].entries, 1000u);
    EXPECT_EQ(t.queue_depth, 3u);

    EXPECT_FALSE(t.last_failed);

    StatusReply idle;
    EXPECT_FALSE(through_wire(idle).running);
}

TEST(Methods, RedactionFlagsAndLastFailedRoundTrip) {
    StatusReply s;
    ScanInfo hidden = sample_scan();
    hidden.root.clear();
    hidden.root_hidden = true;
    hidden.counts_hidden = true;
    s.last_failed = hidden;
    s.roots = {RootInfo{"/usr", 4, 99, 0, 0, true}};
    const json wire = to_json(s);
    EXPECT_EQ(wire.at("last_failed").value("root_hidden", false), true) << wire.dump();
    EXPECT_FALSE(wire.at("queued").is_null());
    const StatusReply t = through_wire(s);
    ASSERT_TRUE(t.last_failed);
    EXPECT_TRUE(t.last_failed->root_hidden);
    EXPECT_TRUE(t.last_failed->counts_hidden);
    EXPECT_EQ(t.last_failed->state, ScanState::Failed);
    ASSERT_EQ(t.roots.size(), 1u);
    EXPECT_TRUE(t.roots[0].counts_hidden);
    // Unset flags are not sent; a hidden root implies hidden counts for any reader.
    const json plain = to_json(sample_scan());
    EXPECT_FALSE(plain.contains("root_hidden"));
    EXPECT_FALSE(plain.contains("counts_hidden"));
    json only_root = plain;
    only_root["root_hidden"] = true;
    auto decoded = from_json<ScanInfo>(only_root);
    ASSERT_TRUE(decoded.ok());
    EXPECT_TRUE(decoded.value().counts_hidden);
}

TEST(Methods, NestedErrorsNameTheElement) {
    json bad = to_json(ScanReply{{sample_scan(), sample_scan()}});
    bad["scans"][1]["entries"] = "many";
    auto decoded = from_json<ScanReply>(bad);
    ASSERT_FALSE(decoded.ok());
    EXPECT_NE(decoded.error().message.find("'scans[1].entries'"), std::string::npos)
        << decoded.error().message;
}

TEST(Methods, FindDuErrorsScansRepliesRoundTrip) {
    FindReply f;
    f.entries = {FindEntry{std::string("/a\nb"), 'f', 10, 20},
                 FindEntry{std::string("/\xFF"), 'd', 0, -1}};
    f.truncated = true;
    const FindReply g = through_wire(f);
    ASSERT_EQ(g.entries.size(), 2u);
    EXPECT_EQ(g.entries[0].path, "/a\nb");
    EXPECT_EQ(g.entries[1].path, "/\xFF");
    EXPECT_EQ(g.entries[1].type, 'd');
    EXPECT_EQ(g.entries[1].mtime_ns, -1);
    EXPECT_TRUE(g.truncated);

    DuReply d;
    d.entries = {DuEntry{"/usr", 0, 100, 4096, 5, 2}};
    const DuReply e = through_wire(d);
    ASSERT_EQ(e.entries.size(), 1u);
    EXPECT_EQ(e.entries[0].disk, 4096u);
    EXPECT_EQ(e.entries[0].dirs, 2u);

    ErrorsReply r;
    r.scan_id = 5;
    r.errors = {ErrorEntry{std::string("/secret\xFF"), 13, "EACCES", "Permission denied"}};
    const ErrorsReply s = through_wire(r);
    ASSERT_EQ(s.errors.size(), 1u);
    EXPECT_EQ(s.errors[0].path, "/secret\xFF");
    EXPECT_EQ(s.errors[0].error, 13);
    EXPECT_EQ(s.errors[0].error_name, "EACCES");

    ScansReply sc;
    sc.scans = {sample_scan()};
    EXPECT_EQ(through_wire(sc).scans.at(0).scan_id, 9u);

    CancelReply c;
    c.cancelled = {1, 2};
    c.unnumbered = 3;
    EXPECT_EQ(through_wire(c).cancelled, (std::vector<std::uint64_t>{1, 2}));
    EXPECT_EQ(through_wire(c).unnumbered, 3u);

    VersionReply v;
    v.server_version = "0.1.0";
    v.interfaces = {"wsindex"};
    v.max_message_bytes = kDefaultMaxMessageBytes;
    v.pid = 1;
    const VersionReply w = through_wire(v);
    EXPECT_EQ(w.interfaces, v.interfaces);
    EXPECT_EQ(w.protocol_version, kProtocolVersion);
}

TEST(Methods, UnknownFieldsAreIgnored) {
    auto p = from_json<DuParams>(json{{"depth", 1}, {"colour", "blue"}, {"future", {{"x", 1}}}});
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->depth, 1u);
}

}  // namespace
}  // namespace wsindex::ipc
