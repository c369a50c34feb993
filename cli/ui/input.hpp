// Keys of the browser: what each key means in each screen (ncdu's keys where ncdu has one).
// Pure mapping, no curses calls: key codes are curses' (KEY_UP, ...) or characters.
#pragma once

namespace wsindex::cli::ui {

// What is on screen, which decides what a key means.
enum class Screen {
    List,     // the directory listing
    Help,     // the key list (any key closes it)
    Details,  // `i`: one entry's columns and errors (any key closes it)
    Results,  // `/`: the search results
};

enum class Action {
    None,
    Up,
    Down,
    PageUp,
    PageDown,
    First,
    Last,
    Enter,   // into the directory under the cursor (Results: to the result's directory)
    Parent,  // up to the parent directory
    SortSize,
    SortName,
    SortCount,
    SortMtime,
    ToggleDirsFirst,
    ToggleApparent,
    CycleGraph,
    ToggleMtime,
    Details,
    Search,
    Rescan,
    Help,
    Close,  // leave Help, Details or Results
    Quit,
    Resize,
};

// The action of `key` (a curses key code or a character) on `screen`.
Action action_for(int key, Screen screen);

}  // namespace wsindex::cli::ui
