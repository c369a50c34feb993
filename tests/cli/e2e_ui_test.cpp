// End to end for `wsctl ui`: the real wsctl in a real terminal (a tmux server of the test's
// own, on a socket in the scratch directory) against the real wsindexd. Keys go in with
// send-keys, the screen comes back with capture-pane, polled until the expected content shows
// (with a deadline). Sizes are checked against `du -sb`, in the browser's exact-bytes mode.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include "tests/cli/support/fixture.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli::test {
namespace {

constexpr const char* kTmux = "/usr/bin/tmux";
constexpr auto kScreenDeadline = std::chrono::seconds(20);

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// One row of the listing as drawn in -b mode with the graph and the percent on.
struct Row {
    char flag = ' ';
    std::uint64_t size = 0;
    std::string items;  // "" for files
    std::string name;   // as shown (escaped), with '/' after directories
};

// The row drawn on `line`, if it is one: flag, size, " [" ten of '#'/' ' "]", the percent, the
// item count in nine columns, two spaces, the name. (No std::regex: GCC 12 warns inside it
// under ASan, and warnings are errors.)
std::optional<Row> row_of(const std::string& line) {
    if (line.size() < 2) return std::nullopt;
    Row row;
    row.flag = line[0];
    std::size_t i = 1;
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t digits = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == digits || line.compare(i, 2, " [") != 0) return std::nullopt;
    row.size = std::stoull(line.substr(digits, i - digits));
    i += 2;
    if (line.size() < i + 11 || line[i + 10] != ']') return std::nullopt;
    for (std::size_t k = i; k < i + 10; ++k) {
        if (line[k] != '#' && line[k] != ' ') return std::nullopt;
    }
    i += 11;
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t number = i;
    while (i < line.size() && (std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == '.'))
        ++i;
    if (i == number || i >= line.size() || line[i] != '%') return std::nullopt;
    ++i;
    if (line.size() < i + 12 || line[i] != ' ' || line.compare(i + 10, 2, "  ") != 0) {
        return std::nullopt;
    }
    const std::string items = line.substr(i + 1, 9);
    const std::size_t first = items.find_first_not_of(' ');
    row.items = first == std::string::npos ? std::string() : items.substr(first);
    if (row.items.find_first_not_of("0123456789,") != std::string::npos) return std::nullopt;
    row.name = line.substr(i + 12);
    while (!row.name.empty() && row.name.back() == ' ') row.name.pop_back();
    return row;
}

std::vector<Row> rows_of(const std::string& screen) {
    std::vector<Row> out;
    for (const std::string& line : lines_of(screen)) {
        if (auto row = row_of(line)) out.push_back(std::move(*row));
    }
    return out;
}

// `text` without its SGR escape sequences (ESC [ ... m).
std::string without_sgr(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
            const std::size_t end = text.find('m', i);
            if (end == std::string::npos) break;
            i = end;
            continue;
        }
        out.push_back(text[i]);
    }
    return out;
}

std::vector<std::string> names_of(const std::vector<Row>& rows) {
    std::vector<std::string> out;
    for (const Row& r : rows) out.push_back(r.name);
    return out;
}

// A tmux server of the test's own; killed (with everything in it) by the destructor.
class Tmux {
  public:
    explicit Tmux(std::string scratch)
        : scratch_(std::move(scratch)),
          socket_(scratch_ + "/tmux" + std::to_string(next_server_++) + ".sock") {}
    Tmux(const Tmux&) = delete;
    Tmux& operator=(const Tmux&) = delete;
    ~Tmux() {
        if (started_) tmux({"kill-server"});
    }

    Exit tmux(std::vector<std::string> args) {
        args.insert(args.begin(), {kTmux, "-S", socket_, "-f", "/dev/null"});
        return run(args, scratch_, std::chrono::seconds(30));
    }

    // Runs `command` (a shell command line) in a 120x40 UTF-8 terminal; after it ends the pane
    // shows "wsctl-exit=<code>" and stays open.
    void start(const std::string& command, const std::string& cwd = {}) {
        const Exit r =
            tmux({"new-session", "-d", "-s", "ui", "-c", cwd.empty() ? scratch_ : cwd, "-x", "120",
                  "-y", "40", "-e", "LANG=C.UTF-8", "-e", "LC_ALL=C.UTF-8", "-e",
                  "TERM=xterm-256color", command + "; echo wsctl-exit=$?; exec cat"});
        ASSERT_EQ(r.code, 0) << r.err;
        started_ = true;
    }

    void keys(std::vector<std::string> keys) {
        keys.insert(keys.begin(), {"send-keys", "-t", "ui"});
        const Exit r = tmux(keys);
        ASSERT_EQ(r.code, 0) << r.err;
    }

    std::string screen() { return tmux({"capture-pane", "-p", "-t", "ui"}).out; }

    // The list row drawn in reverse video (the cursor), its escape sequences removed; "" if none.
    std::string cursor_row() {
        const std::string styled = tmux({"capture-pane", "-p", "-e", "-t", "ui"}).out;
        std::vector<std::string> lines = lines_of(styled);
        // The header (first line) and the status line (last non-empty) are reverse video too.
        for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
            if (lines[i].find("\x1b[7m") == std::string::npos) continue;
            const std::string plain = without_sgr(lines[i]);
            if (!rows_of(plain).empty()) return plain;
        }
        return {};
    }

    // The screen once `ready` holds for it (polled until the deadline); the last screen
    // otherwise, with a test failure naming `what`.
    std::string wait_for(const std::string& what,
                         const std::function<bool(const std::string&)>& ready) {
        const auto deadline = std::chrono::steady_clock::now() + kScreenDeadline;
        std::string last;
        while (std::chrono::steady_clock::now() < deadline) {
            last = screen();
            if (ready(last)) return last;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ADD_FAILURE() << "the screen never showed " << what << "; last screen:\n" << last;
        return last;
    }

    std::string wait_for_text(const std::string& text) {
        return wait_for("'" + text + "'",
                        [&](const std::string& s) { return s.find(text) != std::string::npos; });
    }

  private:
    std::string scratch_;
    // Each server its own socket: a killed server may still be exiting (its socket file still
    // there) when the next one starts, and a client would reach the dying one.
    static inline int next_server_ = 0;
    std::string socket_;
    bool started_ = false;
};

void write_file(const std::string& path, std::size_t bytes) {
    std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
}

class UiEndToEnd : public EndToEnd {
  protected:
    void SetUp() override {
        if (::access(kTmux, X_OK) != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs tmux";
        // Only scans change the index here: a change shows after `r`, not by itself.
        // Anyone may connect (the unprivileged user's test).
        const std::string config = scratch_ / "wsindexd.conf";
        std::ofstream(config) << "socket_mode = 0666\n";
        extra_args_ = {"--no-watch", "--config", config};
        EndToEnd::SetUp();
        tree_ = scratch_ / "tree";
        ASSERT_EQ(::mkdir(tree_.c_str(), 0755), 0);
        // Sizes and counts differ so that each order is one answer.
        for (const auto& [dir, files] :
             std::vector<std::pair<std::string, int>>{{"alpha", 3}, {"bravo", 1}, {"charlie", 6}}) {
            ASSERT_EQ(::mkdir((tree_ + "/" + dir).c_str(), 0755), 0);
            for (int i = 0; i < files; ++i) {
                const std::size_t size = dir == "bravo" ? 90000 : 1000 * (i + 1);
                write_file(tree_ + "/" + dir + "/f" + std::to_string(i), size);
            }
        }
        ASSERT_EQ(::mkdir((tree_ + "/charlie/deep").c_str(), 0755), 0);
        write_file(tree_ + "/charlie/deep/needle.txt", 123);
        write_file(tree_ + "/top.bin", 50000);
        scan(tree_);
    }

    std::string ui_command(const std::string& path, const std::string& prefix = {}) {
        return prefix + WSINDEX_WSCTL + std::string(" --socket ") + daemon_->socket() + " ui -b " +
               path;
    }

    // Waits for the listing of `path` with `count` rows and returns them.
    std::vector<Row> wait_rows(Tmux& t, const std::string& path, std::size_t count) {
        const std::string screen = t.wait_for(
            path + " with " + std::to_string(count) + " rows", [&](const std::string& s) {
                return s.find(" " + path + " ") != std::string::npos && rows_of(s).size() == count;
            });
        return rows_of(screen);
    }

    std::string tree_;
};

TEST_F(UiEndToEnd, FirstScreenHasDuTotalsLargestFirstAndSortsByNameAndCount) {
    Tmux t(scratch_.path());
    ASSERT_NO_FATAL_FAILURE(t.start(ui_command(tree_)));
    const std::vector<Row> rows = wait_rows(t, tree_, 4);
    ASSERT_EQ(rows.size(), 4u);
    // Largest first; each size is what du -sb says of that entry.
    EXPECT_EQ(names_of(rows),
              (std::vector<std::string>{"bravo/", "top.bin", "charlie/", "alpha/"}));
    for (const Row& r : rows) {
        std::string name = r.name;
        if (name.back() == '/') name.pop_back();
        EXPECT_EQ(r.size, du_sb(tree_ + "/" + name, scratch_.path())) << name;
    }
    EXPECT_EQ(rows[0].items, "1");
    EXPECT_EQ(rows[2].items, "8");  // charlie: 6 files, deep/, needle.txt
    EXPECT_EQ(rows[1].items, "");
    t.wait_for_text("Total: " + std::to_string(du_sb(tree_, scratch_.path())) + " ");

    ASSERT_NO_FATAL_FAILURE(t.keys({"n"}));
    t.wait_for("rows by name", [&](const std::string& s) {
        return names_of(rows_of(s)) ==
               std::vector<std::string>{"alpha/", "bravo/", "charlie/", "top.bin"};
    });
    ASSERT_NO_FATAL_FAILURE(t.keys({"C"}));
    t.wait_for("rows by item count", [&](const std::string& s) {
        return names_of(rows_of(s)) ==
               std::vector<std::string>{"charlie/", "alpha/", "bravo/", "top.bin"};
    });
    ASSERT_NO_FATAL_FAILURE(t.keys({"q"}));
    t.wait_for_text("wsctl-exit=0");
}

TEST_F(UiEndToEnd, EntersLeavesSearchesShowsDetailsAndResizes) {
    Tmux t(scratch_.path());
    ASSERT_NO_FATAL_FAILURE(t.start(ui_command(tree_)));
    wait_rows(t, tree_, 4);
    // charlie is the third row by size: down twice, then in.
    ASSERT_NO_FATAL_FAILURE(t.keys({"j", "j", "Enter"}));
    const std::vector<Row> inside = wait_rows(t, tree_ + "/charlie", 7);
    EXPECT_EQ(inside.front().name, "f5");
    ASSERT_NO_FATAL_FAILURE(t.keys({"BSpace"}));
    wait_rows(t, tree_, 4);

    // The details of the entry under the cursor (charlie again: the cursor came back to it).
    ASSERT_NO_FATAL_FAILURE(t.keys({"i"}));
    const std::string details = t.wait_for_text("nlink");
    EXPECT_NE(details.find(tree_ + "/charlie"), std::string::npos) << details;
    EXPECT_NE(details.find("files below  7"), std::string::npos) << details;
    EXPECT_NE(details.find("no scan errors"), std::string::npos) << details;
    ASSERT_NO_FATAL_FAILURE(t.keys({"Escape"}));
    wait_rows(t, tree_, 4);

    // Search below here; Enter goes to the result's directory, the cursor on it.
    ASSERT_NO_FATAL_FAILURE(t.keys({"/"}));
    t.wait_for_text("search below here:");
    ASSERT_NO_FATAL_FAILURE(t.keys({"-l", "needle"}));
    ASSERT_NO_FATAL_FAILURE(t.keys({"Enter"}));
    t.wait_for_text("charlie/deep/needle.txt");
    ASSERT_NO_FATAL_FAILURE(t.keys({"Enter"}));
    const std::vector<Row> deep = wait_rows(t, tree_ + "/charlie/deep", 1);
    ASSERT_EQ(deep.size(), 1u);
    EXPECT_EQ(deep[0].name, "needle.txt");
    EXPECT_EQ(deep[0].size, 123u);

    // A smaller window: the header and the status line are redrawn at the new size.
    ASSERT_NO_FATAL_FAILURE(t.keys({"h"}));
    wait_rows(t, tree_ + "/charlie", 7);
    ASSERT_EQ(t.tmux({"resize-window", "-t", "ui", "-x", "60", "-y", "5"}).code, 0);
    const std::string small = t.wait_for("a 5-line screen", [&](const std::string& s) {
        const auto lines = lines_of(s);
        return lines.size() >= 5 && lines[4].find("Total:") != std::string::npos &&
               rows_of(s).size() == 3;
    });
    for (const std::string& line : lines_of(small)) EXPECT_LE(line.size(), 60u) << line;
    ASSERT_EQ(t.tmux({"resize-window", "-t", "ui", "-x", "120", "-y", "40"}).code, 0);
    wait_rows(t, tree_ + "/charlie", 7);
    ASSERT_NO_FATAL_FAILURE(t.keys({"q"}));
    const std::string after = t.wait_for_text("wsctl-exit=0");
    EXPECT_EQ(after.find("wsctl ui"), std::string::npos) << "the browser is still shown:\n"
                                                         << after;
}

TEST_F(UiEndToEnd, RescanShowsAChangeAndOddNamesStayOnTheirRows) {
    Tmux t(scratch_.path());
    ASSERT_NO_FATAL_FAILURE(t.start(ui_command(tree_)));
    wait_rows(t, tree_, 4);
    // The cursor on charlie (third by size); it stays there when the rows move.
    ASSERT_NO_FATAL_FAILURE(t.keys({"j", "j"}));
    t.wait_for("the cursor on charlie", [&](const std::string&) {
        return t.cursor_row().find("charlie/") != std::string::npos;
    });
    // New entries, some with names that would break a row if printed raw; wide characters
    // must not shift the columns.
    write_file(tree_ + "/new\nline", 7);
    write_file(tree_ + "/bad\xff", 8);
    write_file(tree_ + "/tab\there\x1b[2J", 9);
    write_file(tree_ + "/日本語", 10);
    write_file(tree_ + "/grin\xF0\x9F\x98\x80", 11);
    write_file(tree_ + "/zz-large", 200000);
    ASSERT_NO_FATAL_FAILURE(t.keys({"r"}));
    const std::vector<Row> rows = wait_rows(t, tree_, 10);
    ASSERT_EQ(rows.size(), 10u);
    EXPECT_EQ(rows[0].name, "zz-large");
    EXPECT_EQ(rows[0].size, 200000u);
    const std::vector<std::string> names = names_of(rows);
    const std::vector<std::string> tail(names.end() - 5, names.end());
    EXPECT_EQ(tail, (std::vector<std::string>{"grin😀", "日本語", "tab\\there\\x1B[2J", "bad\\xFF",
                                              "new\\nline"}));
    // The size column ends at the same column on every row.
    const std::string screen = t.screen();
    std::set<std::size_t> bracket;
    for (const std::string& line : lines_of(screen)) {
        if (rows_of(line).empty()) continue;
        bracket.insert(line.find(" ["));
    }
    EXPECT_EQ(bracket.size(), 1u) << screen;
    EXPECT_NE(t.cursor_row().find("charlie/"), std::string::npos) << t.cursor_row();
    t.wait_for_text("Total: " + std::to_string(du_sb(tree_, scratch_.path())) + " ");
    ASSERT_NO_FATAL_FAILURE(t.keys({"q"}));
    t.wait_for_text("wsctl-exit=0");
}

TEST_F(UiEndToEnd, RefreshesByItselfWhenAScanFromElsewhereChangesTheIndex) {
    Tmux t(scratch_.path());
    ASSERT_NO_FATAL_FAILURE(t.start(ui_command(tree_)));
    wait_rows(t, tree_, 4);
    // Another client's scan, no key pressed in the browser: its Status poll sees the scan end
    // and reads the directory again.
    write_file(tree_ + "/zz-new", 300000);
    scan(tree_);
    const std::vector<Row> rows = wait_rows(t, tree_, 5);
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(rows[0].name, "zz-new");
    EXPECT_EQ(rows[0].size, 300000u);
    t.wait_for_text("Total: " + std::to_string(du_sb(tree_, scratch_.path())) + " ");
    ASSERT_NO_FATAL_FAILURE(t.keys({"q"}));
    t.wait_for_text("wsctl-exit=0");
}

TEST_F(UiEndToEnd, ADirectoryTooLargeForOneMessageIsListedWhole) {
    // 5000 entries with their columns take more than the 1 MiB message cap: streamed.
    const std::string wide = tree_ + "/wide";
    ASSERT_EQ(::mkdir(wide.c_str(), 0755), 0);
    for (int i = 0; i < 5000; ++i) {
        char name[64];
        std::snprintf(name, sizeof name, "/a-file-with-a-rather-long-name-%05d", i);
        write_file(wide + name, i == 4321 ? 777 : 1);
    }
    scan(wide);
    Tmux t(scratch_.path());
    ASSERT_NO_FATAL_FAILURE(t.start(ui_command(wide)));
    const std::vector<Row> rows = wait_rows(t, wide, 38);
    ASSERT_EQ(rows.size(), 38u);
    EXPECT_EQ(rows[0].name, "a-file-with-a-rather-long-name-04321");
    t.wait_for_text("Total: " + std::to_string(du_sb(wide, scratch_.path())) + "  Items: 5,000");
    ASSERT_NO_FATAL_FAILURE(t.keys({"End"}));
    t.wait_for("the last entry by size and name", [&](const std::string& s) {
        const auto r = rows_of(s);
        return !r.empty() && r.back().name == "a-file-with-a-rather-long-name-04999";
    });
    ASSERT_NO_FATAL_FAILURE(t.keys({"q"}));
    t.wait_for_text("wsctl-exit=0");
}

TEST_F(UiEndToEnd, AnUnprivilegedUserSeesOnlyWhatTheyMayList) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root (setpriv to nobody)";
    // secret/ 0700 (root's): its name shows, marked partial; nothing below it, in the list, the
    // totals or a search.
    const std::string secret = tree_ + "/secret";
    ASSERT_EQ(::mkdir(secret.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((secret + "/inner").c_str(), 0755), 0);
    write_file(secret + "/inner/needle-secret", 300000);
    scan(tree_);
    Tmux t(scratch_.path());
    ASSERT_NO_FATAL_FAILURE(t.start(
        ui_command(tree_, "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups -- ")));
    const std::vector<Row> rows = wait_rows(t, tree_, 5);
    ASSERT_EQ(rows.size(), 5u);
    struct stat st {};
    ASSERT_EQ(::lstat(secret.c_str(), &st), 0);
    bool saw_secret = false;
    for (const Row& r : rows) {
        if (r.name != "secret/") continue;
        saw_secret = true;
        EXPECT_EQ(r.flag, '.');
        EXPECT_EQ(r.size, static_cast<std::uint64_t>(st.st_size));  // itself only
    }
    EXPECT_TRUE(saw_secret);
    // The total: du -sb of the tree less what is inside secret/.
    const std::uint64_t hidden =
        du_sb(secret, scratch_.path()) - static_cast<std::uint64_t>(st.st_size);
    t.wait_for_text("Total: " + std::to_string(du_sb(tree_, scratch_.path()) - hidden) + " ");
    t.wait_for_text("partial: some content is hidden from you");
    ASSERT_NO_FATAL_FAILURE(t.keys({"/"}));
    t.wait_for_text("search below here:");
    ASSERT_NO_FATAL_FAILURE(t.keys({"-l", "needle"}));
    ASSERT_NO_FATAL_FAILURE(t.keys({"Enter"}));
    const std::string found = t.wait_for_text("charlie/deep/needle.txt");
    EXPECT_EQ(found.find("needle-secret"), std::string::npos) << found;
    EXPECT_NE(found.find("(1)"), std::string::npos) << found;
    ASSERT_NO_FATAL_FAILURE(t.keys({"q", "q"}));
    t.wait_for_text("wsctl-exit=0");
}

TEST_F(UiEndToEnd, OpensTheCurrentDirectoryIfIndexedElseTheLargestRoot) {
    // A second, smaller root: the default is the larger one.
    const std::string small = scratch_ / "small";
    ASSERT_EQ(::mkdir(small.c_str(), 0755), 0);
    write_file(small + "/only", 5);
    scan(small);
    const std::string wsctl = WSINDEX_WSCTL + std::string(" --socket ") + daemon_->socket();
    {
        Tmux t(scratch_.path());
        ASSERT_NO_FATAL_FAILURE(t.start(wsctl + " ui -b", scratch_.path()));  // not indexed
        wait_rows(t, tree_, 4);
    }
    {
        Tmux t(scratch_.path());
        ASSERT_NO_FATAL_FAILURE(t.start(wsctl + " ui -b", tree_ + "/charlie"));
        wait_rows(t, tree_ + "/charlie", 7);
    }
}

TEST_F(UiEndToEnd, NeedsATerminal) {
    // TERM=dumb in a real terminal: a clear error, exit 2 (usage), the terminal left alone.
    Tmux t(scratch_.path());
    ASSERT_NO_FATAL_FAILURE(t.start(ui_command(tree_, "TERM=dumb ")));
    const std::string screen = t.wait_for_text("wsctl-exit=2");
    EXPECT_NE(screen.find("TERM is dumb"), std::string::npos) << screen;
    // No terminal at all (stdout a file).
    const Exit r = ctl({"ui", tree_});
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("not a terminal"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace wsindex::cli::test
