// Key bindings of the browser (input.hpp).
#include "cli/ui/input.hpp"

#include <curses.h>

namespace wsindex::cli::ui {

namespace {

constexpr int kEscape = 27;
constexpr int kCtrlB = 2;
constexpr int kCtrlF = 6;

// Moving, on every screen that has a list.
Action movement(int key) {
    switch (key) {
        case KEY_UP:
        case 'k':
            return Action::Up;
        case KEY_DOWN:
        case 'j':
            return Action::Down;
        case KEY_PPAGE:
        case kCtrlB:
            return Action::PageUp;
        case KEY_NPAGE:
        case kCtrlF:
            return Action::PageDown;
        case KEY_HOME:
            return Action::First;
        case KEY_END:
            return Action::Last;
        default:
            return Action::None;
    }
}

}  // namespace

Action action_for(int key, Screen screen) {
    if (key == KEY_RESIZE) return Action::Resize;
    switch (screen) {
        case Screen::Help:
        case Screen::Details:
            return Action::Close;
        case Screen::Results:
            if (const Action a = movement(key); a != Action::None) return a;
            switch (key) {
                case KEY_ENTER:
                case '\n':
                case '\r':
                case KEY_RIGHT:
                case 'l':
                    return Action::Enter;
                case 'q':
                case kEscape:
                case KEY_BACKSPACE:
                case 127:
                case '\b':
                case KEY_LEFT:
                case 'h':
                    return Action::Close;
                case '/':
                    return Action::Search;
                case '?':
                    return Action::Help;
                default:
                    return Action::None;
            }
        case Screen::List:
            break;
    }
    if (const Action a = movement(key); a != Action::None) return a;
    switch (key) {
        case KEY_ENTER:
        case '\n':
        case '\r':
        case KEY_RIGHT:
        case 'l':
            return Action::Enter;
        case KEY_BACKSPACE:
        case 127:
        case '\b':
        case KEY_LEFT:
        case 'h':
        case '<':
            return Action::Parent;
        case 's':
            return Action::SortSize;
        case 'n':
            return Action::SortName;
        case 'C':
            return Action::SortCount;
        case 'M':
            return Action::SortMtime;
        case 't':
            return Action::ToggleDirsFirst;
        case 'a':
            return Action::ToggleApparent;
        case 'g':
            return Action::CycleGraph;
        case 'm':
            return Action::ToggleMtime;
        case 'i':
            return Action::Details;
        case '/':
            return Action::Search;
        case 'r':
            return Action::Rescan;
        case '?':
            return Action::Help;
        case 'q':
            return Action::Quit;
        default:
            return Action::None;
    }
}

}  // namespace wsindex::cli::ui
