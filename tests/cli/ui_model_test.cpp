// Unit tests of the browser's parts without a terminal: sorting and the cursor (cli/ui/model),
// names made safe and measured (cli/ui/name_display), keys (cli/ui/input).
#include <curses.h>
#include <gtest/gtest.h>

#include <clocale>

#include "cli/ui/input.hpp"
#include "cli/ui/model.hpp"
#include "cli/ui/name_display.hpp"

namespace wsindex::cli::ui {
namespace {

Entry make(const std::string& name, char type, std::uint64_t size, std::uint64_t items,
           std::int64_t mtime = 0) {
    Entry e;
    e.name = name;
    e.path = "/r/" + name;
    e.type = type;
    e.size = size;
    e.disk = 4096 * ((size + 4095) / 4096);
    e.files = items;
    ipc::DuEntryStat st;
    st.type = type;
    st.has_stat = true;
    st.mtime_ns = mtime;
    e.stat = st;
    return e;
}

std::vector<std::string> names(const std::vector<Entry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.name);
    return out;
}

std::vector<Entry> sample() {
    return {make("b", 'f', 300, 0, 3), make("a", 'd', 100, 5, 1), make("c", 'd', 300, 1, 2),
            make("d", 'f', 5000, 0, 0)};
}

TEST(UiModel, SortsLargestFirstWithTiesByNameAndEachKeyTogglesItsDirection) {
    SortOrder order;
    auto e = sample();
    sort_entries(e, order);
    EXPECT_EQ(names(e), (std::vector<std::string>{"d", "b", "c", "a"}));
    choose_sort_key(order, SortKey::Size);  // again: smallest first
    sort_entries(e, order);
    EXPECT_EQ(names(e), (std::vector<std::string>{"a", "b", "c", "d"}));
    choose_sort_key(order, SortKey::Name);
    EXPECT_FALSE(order.descending);
    sort_entries(e, order);
    EXPECT_EQ(names(e), (std::vector<std::string>{"a", "b", "c", "d"}));
    choose_sort_key(order, SortKey::Count);
    sort_entries(e, order);
    EXPECT_EQ(names(e), (std::vector<std::string>{"a", "c", "b", "d"}));
    choose_sort_key(order, SortKey::Mtime);
    sort_entries(e, order);
    EXPECT_EQ(names(e), (std::vector<std::string>{"b", "c", "a", "d"}));
    order = SortOrder{};
    order.dirs_first = true;
    sort_entries(e, order);
    EXPECT_EQ(names(e), (std::vector<std::string>{"c", "a", "d", "b"}));
    order = SortOrder{};
    order.apparent = false;  // on disk: b and c both take one block, d two
    sort_entries(e, order);
    EXPECT_EQ(names(e), (std::vector<std::string>{"d", "a", "b", "c"}));
}

TEST(UiModel, CursorStaysInTheListAndFollowsItsEntry) {
    Listing l;
    l.entries = sample();
    l.move(-5);
    EXPECT_EQ(l.cursor, 0u);
    l.move(100);
    EXPECT_EQ(l.cursor, 3u);
    EXPECT_TRUE(l.select("a"));
    EXPECT_EQ(l.current()->name, "a");
    EXPECT_FALSE(l.select("zz"));
    EXPECT_EQ(l.current()->name, "a");
    l.cursor = 3;
    l.scroll_to_cursor(2);
    EXPECT_EQ(l.top, 2u);
    l.cursor = 0;
    l.scroll_to_cursor(2);
    EXPECT_EQ(l.top, 0u);
    l.entries.clear();
    l.move(1);
    EXPECT_EQ(l.current(), nullptr);
}

TEST(UiModel, ListingFromDuKeepsThePathAndItsChildren) {
    ipc::DuReply reply;
    ipc::DuEntry self;
    self.path = "/r";
    self.size = 10;
    reply.entries.push_back(self);
    ipc::DuEntry dir;
    dir.path = "/r/sub";
    dir.depth = 1;
    dir.size = 3;
    dir.files = 2;
    dir.dirs = 1;
    dir.partial = true;
    reply.entries.push_back(dir);  // from a daemon without `children`: no type, a directory
    ipc::DuEntry deeper = dir;
    deeper.path = "/r/sub/x";
    deeper.depth = 2;
    reply.entries.push_back(deeper);
    ipc::DuEntry file;
    file.path = "/r/f";
    file.depth = 1;
    file.size = 7;
    file.stat = ipc::DuEntryStat{};
    file.stat->type = 'f';
    reply.entries.push_back(file);
    const Listing l = listing_from_du("/r", reply, SortOrder{});
    EXPECT_EQ(l.self.size, 10u);
    ASSERT_EQ(l.entries.size(), 2u);
    EXPECT_EQ(l.entries[0].name, "f");
    EXPECT_FALSE(l.entries[0].is_dir());
    EXPECT_EQ(l.entries[1].name, "sub");
    EXPECT_TRUE(l.entries[1].is_dir());
    EXPECT_TRUE(l.entries[1].partial);
    EXPECT_EQ(l.entries[1].items(), 3u);
    EXPECT_EQ(parent_path("/r/sub"), "/r");
    EXPECT_EQ(parent_path("/r"), "/");
    EXPECT_EQ(base_name("/"), "/");
}

class UiNames : public ::testing::Test {
  protected:
    void SetUp() override {
        if (std::setlocale(LC_ALL, "C.UTF-8") == nullptr) GTEST_FAIL() << "no C.UTF-8 locale";
    }
    void TearDown() override { std::setlocale(LC_ALL, "C"); }
};

TEST_F(UiNames, ControlBytesAndInvalidUtf8AreEscaped) {
    EXPECT_TRUE(locale_is_utf8());
    EXPECT_EQ(shown_name("a\nb\tc\\", true).text, "a\\nb\\tc\\\\");
    EXPECT_EQ(shown_name("x\x1b[2J", true).text, "x\\x1B[2J");
    EXPECT_EQ(shown_name("bad\xff", true).text, "bad\\xFF");
    EXPECT_EQ(shown_name("\xc0\xaf", true).text, "\\xC0\\xAF");           // overlong '/'
    EXPECT_EQ(shown_name("\xed\xa0\x80", true).text, "\\xED\\xA0\\x80");  // a surrogate
    EXPECT_EQ(shown_name("\xc2\x85", true).text, "\\u{85}");              // C1 NEL
    EXPECT_EQ(shown_name("a\xe2\x80\xaez", true).text, "a\\u{202E}z");    // RIGHT-TO-LEFT OVERRIDE
    const ShownText shown = shown_name("x\xe6\x97\xa5", false);           // not a UTF-8 terminal
    EXPECT_EQ(shown.text, "x\\xE6\\x97\\xA5");
    EXPECT_EQ(shown.width, shown.text.size());
}

TEST_F(UiNames, WideCharactersCountTwoColumnsAndAreNeverCutInHalf) {
    const ShownText cjk = shown_name("日本語", true);
    EXPECT_EQ(cjk.text, "日本語");
    EXPECT_EQ(cjk.width, 6u);
    EXPECT_EQ(shown_name("😀", true).width, 2u);
    EXPECT_EQ(fit_columns(cjk, 6, false), "日本語");
    EXPECT_EQ(fit_columns(cjk, 5, false), "日本~");
    EXPECT_EQ(fit_columns(cjk, 4, true), "日~ ");  // padded to exactly 4 columns
    EXPECT_EQ(fit_columns(shown_name("abc", true), 6, true), "abc   ");
    EXPECT_EQ(fit_columns(shown_name("abcdef", true), 4, false), "abc~");
}

TEST(UiInput, NcduKeysOnTheListAndAnyKeyClosesHelpAndDetails) {
    EXPECT_EQ(action_for('j', Screen::List), Action::Down);
    EXPECT_EQ(action_for(KEY_UP, Screen::List), Action::Up);
    EXPECT_EQ(action_for('l', Screen::List), Action::Enter);
    EXPECT_EQ(action_for('\r', Screen::List), Action::Enter);
    EXPECT_EQ(action_for(KEY_BACKSPACE, Screen::List), Action::Parent);
    EXPECT_EQ(action_for('h', Screen::List), Action::Parent);
    EXPECT_EQ(action_for('s', Screen::List), Action::SortSize);
    EXPECT_EQ(action_for('n', Screen::List), Action::SortName);
    EXPECT_EQ(action_for('C', Screen::List), Action::SortCount);
    EXPECT_EQ(action_for('M', Screen::List), Action::SortMtime);
    EXPECT_EQ(action_for('t', Screen::List), Action::ToggleDirsFirst);
    EXPECT_EQ(action_for('a', Screen::List), Action::ToggleApparent);
    EXPECT_EQ(action_for('g', Screen::List), Action::CycleGraph);
    EXPECT_EQ(action_for('m', Screen::List), Action::ToggleMtime);
    EXPECT_EQ(action_for('i', Screen::List), Action::Details);
    EXPECT_EQ(action_for('/', Screen::List), Action::Search);
    EXPECT_EQ(action_for('r', Screen::List), Action::Rescan);
    EXPECT_EQ(action_for('?', Screen::List), Action::Help);
    EXPECT_EQ(action_for('q', Screen::List), Action::Quit);
    EXPECT_EQ(action_for('q', Screen::Results), Action::Close);
    EXPECT_EQ(action_for('j', Screen::Results), Action::Down);
    EXPECT_EQ(action_for('x', Screen::Help), Action::Close);
    EXPECT_EQ(action_for('q', Screen::Details), Action::Close);
    EXPECT_EQ(action_for(KEY_RESIZE, Screen::Details), Action::Resize);
}

}  // namespace
}  // namespace wsindex::cli::ui
