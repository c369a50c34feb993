// ChaseLevDeque: a growable lock-free work-stealing deque, one owner and any number of thieves,
// used through an owner handle (DequeOwner: push, pop) and thief handles (DequeStealer: steal).
//
// ## Design note
//
// Roles. Exactly one thread, the *owner*, calls push() and pop() at the bottom; any thread, a
// *thief*, calls steal() or steal_batch() at the top. size_estimate() and empty_estimate() may be
// called by anyone and are only estimates. The roles are types, as in crossbeam-deque: the deque's
// operations are private, DequeOwner (move-only: one owner) is the only way to push and pop, and
// DequeStealer (copyable, from DequeOwner::stealer()) can only steal, so a thief cannot pop by
// mistake. Handing the DequeOwner to another thread hands over the role (with a happens-before,
// e.g. a thread join), as the pool's destructor does.
//
// Layout. A circular buffer of 2^k atomic slots indexed by two monotonically moving 64-bit
// counters: `top_` (next index a thief takes) and `bottom_` (next index the owner writes). The
// live items are [top_, bottom_). Indices never wrap in practice (2^63 operations).
//
// The algorithm is the C11 version of Lê, Pop, Cohen & Nardelli, "Correct and Efficient
// Work-Stealing for Weak Memory Models", PPoPP 2013 (Fig. 1), with these departures:
//   1. Slots are std::atomic<T>, read and written relaxed. The paper does the same; reading them
//      non-atomically (a "benign race" in some implementations) would be, in C++, undefined
//      behaviour and a ThreadSanitizer report.
//   2. The paper's `atomic_thread_fence(release); bottom.store(relaxed)` in push is written as
//      `bottom_.store(release)`, and every other store of bottom_ (pop's lowering store and its
//      restoring stores) is release too (I5). ThreadSanitizer does not model fences, and in C++20
//      a plain store, even by the thread that made the release store, ends its release sequence.
//   3. The buffer is never shrunk, and a replaced buffer is *retired*, not freed: a thief that
//      loaded the old buffer pointer may still read a slot from it. Retired buffers are freed when
//      the deque is destroyed. Each is half the size of its successor, so together they take less
//      memory than the live buffer.
//
// Invariants (numbered so the code can refer to them):
//   I1. Only the owner writes bottom_ and buffer_, and writes slots (at index bottom_).
//   I2. top_ only increases, and only by a successful CAS (a thief's, or the owner's for the last
//       item). Whoever wins the CAS from t to t+1 owns the item at index t; nobody else does.
//   I3. The owner never writes a slot that a thief may still take: push grows the buffer when
//       bottom - top >= capacity, using a value of top_ that can only be stale-low (conservative).
//   I4. Every item the owner pushes is visible to a thief that sees the new bottom_: the slot
//       store precedes bottom_.store(release), which the thief's bottom_.load(acquire) pairs with.
//   I5. Every store of bottom_ is a release store, so I4 holds whichever value a thief reads. In
//       C++20 a release sequence continues only through read-modify-writes: a relaxed store of
//       bottom_ by pop() would end the sequence headed by the last push, and a thief whose acquire
//       load read pop's value would synchronise with nothing. It could then see t < b and read a
//       slot (or, after a grow, the buffer_ pointer and the copied slots) that no happens-before
//       edge makes visible. With pop's stores released, the thief's acquire load synchronises
//       with that pop, which is sequenced after every earlier push and grow of the owner (I1):
//       every slot store below bottom_ and every buffer_ store happen before the thief's reads.
//       The cost is nil on x86 (a plain mov) and one store-release on ARM, ahead of a full fence.
//
// The race for the last item, as a timeline (owner pops while a thief steals; one item at t):
//
//     owner                                   thief
//     b = bottom-1; bottom = b  (store)       t = top (acquire)
//     ---- seq_cst fence ----                 ---- seq_cst fence ----
//     t = top                                 b = bottom (acquire)
//     t == b: CAS top t -> t+1                t < b? read slot t; CAS top t -> t+1
//
// The two seq_cst fences make the store-then-load on each side sequentially consistent, so at
// least one side sees the other's write: either the thief sees the lowered bottom (and reports
// empty), or the owner sees t == b and both race on the same CAS, which exactly one wins (I2).
// When more than one item remains (t < b), the owner takes index b without a CAS: a thief can only
// take index t < b, and can't pass the lowered bottom because of the fence argument above.
//
// Batch stealing. The owner pops without a CAS whenever more than one item remains, so a thief
// that claimed k slots with one CAS (top += k) could take items the owner is popping at the same
// moment: duplicates. steal_batch() therefore claims one slot per CAS, in a loop (as crossbeam's
// steal_batch does for LIFO workers), up to half the victim's items with a cap, and publishes them
// in the thief's own deque afterwards.
//
// Outcomes. A steal reports Empty (nothing there), Success, or Retry (lost a CAS race: there may
// be more). An idle worker's parking logic needs the difference: Retry must not lead to sleep.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

namespace wsindex::core {

// One cache line; hot counters written by different threads live on different lines.
inline constexpr std::size_t kCacheLine = 64;

enum class StealStatus : std::uint8_t { Empty, Success, Retry };

template <class T>
struct Stolen {
    StealStatus status = StealStatus::Empty;
    T value{};              // meaningful only when status == Success
    std::size_t count = 0;  // items taken (steal_batch: the returned one plus those published)

    [[nodiscard]] bool success() const { return status == StealStatus::Success; }
};

template <class T>
class DequeOwner;
template <class T>
class DequeStealer;

// The shared state. Every operation is private: use it through DequeOwner and DequeStealer.
template <class T>
class ChaseLevDeque {
    static_assert(std::is_trivially_copyable_v<T>,
                  "slots are atomics: T must be trivially copyable");
    static_assert(std::atomic<T>::is_always_lock_free, "slots must be lock-free atomics");

  public:
    // capacity: initial number of slots, rounded up to a power of two (at least 2).
    explicit ChaseLevDeque(std::size_t capacity = 1024) {
        std::size_t cap = 2;
        while (cap < capacity) cap *= 2;
        auto first = std::make_unique<Buffer>(cap);
        buffer_.store(first.get(), std::memory_order_relaxed);
        buffers_.push_back(std::move(first));
    }
    ChaseLevDeque(const ChaseLevDeque&) = delete;
    ChaseLevDeque& operator=(const ChaseLevDeque&) = delete;

  private:
    friend class DequeOwner<T>;
    friend class DequeStealer<T>;

    // Owner only. Appends at the bottom; grows the buffer when full. Never fails except by
    // std::bad_alloc from growth.
    void push(T item) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);  // I1: we wrote it
        // acquire: pairs with a thief's CAS on top_, so a slot it freed is no longer read (I3).
        const std::int64_t t = top_.load(std::memory_order_acquire);
        Buffer* buf = buffer_.load(std::memory_order_relaxed);  // I1: we wrote it
        if (b - t >= static_cast<std::int64_t>(buf->capacity)) buf = grow(buf, t, b);
        buf->slot(b).store(item, std::memory_order_relaxed);
        // release: publishes the slot (and what T points to) to thieves that acquire bottom_ (I4).
        bottom_.store(b + 1, std::memory_order_release);
    }

    // Owner only. Takes the most recently pushed item (LIFO), or nullopt when empty.
    std::optional<T> pop() {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        Buffer* buf = buffer_.load(std::memory_order_relaxed);
        // release, not relaxed: a thief that reads this value must still synchronise with the
        // pushes (and grows) before it (I5).
        bottom_.store(b, std::memory_order_release);
        // seq_cst fence: our store of bottom_ is ordered before our load of top_ against a
        // thief's store-load pair (see the timeline in the design note).
        std::atomic_thread_fence(std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_relaxed);
        if (t > b) {  // was already empty: restore bottom_ (release: I5)
            bottom_.store(b + 1, std::memory_order_release);
            return std::nullopt;
        }
        T item = buf->slot(b).load(std::memory_order_relaxed);
        if (t == b) {
            // Last item: race thieves for it with the same CAS they use (I2).
            const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                          std::memory_order_relaxed);
            bottom_.store(b + 1, std::memory_order_release);
            if (!won) return std::nullopt;
        }
        return item;
    }

    // Any thread. Takes the oldest item (FIFO end). Empty, Success, or Retry on a lost race.
    Stolen<T> steal() {
        // acquire: pairs with other thieves' CAS on top_.
        std::int64_t t = top_.load(std::memory_order_acquire);
        std::atomic_thread_fence(std::memory_order_seq_cst);  // see the timeline
        // acquire: pairs with push's release store, making the slot and its pointee visible (I4).
        const std::int64_t b = bottom_.load(std::memory_order_acquire);
        if (t >= b) return {StealStatus::Empty, T{}, 0};
        // acquire: pairs with grow()'s release store, so the copied slots are visible.
        Buffer* buf = buffer_.load(std::memory_order_acquire);
        T item = buf->slot(t).load(std::memory_order_relaxed);
        // The CAS decides ownership (I2). If it fails, `item` may be stale garbage: discard it.
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                          std::memory_order_relaxed)) {
            return {StealStatus::Retry, T{}, 0};
        }
        return {StealStatus::Success, item, 1};
    }

    // Any thread. The number of items at some recent moment (never negative).
    [[nodiscard]] std::size_t size_estimate() const {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        const std::int64_t t = top_.load(std::memory_order_relaxed);
        return b > t ? static_cast<std::size_t>(b - t) : 0;
    }
    [[nodiscard]] bool empty_estimate() const { return size_estimate() == 0; }

    // Owner only (reads owner-only state). Current number of slots.
    [[nodiscard]] std::size_t capacity() const {
        return buffer_.load(std::memory_order_relaxed)->capacity;
    }

    struct Buffer {
        explicit Buffer(std::size_t cap)
            : capacity(cap), mask(cap - 1), slots(new std::atomic<T>[cap]) {}
        std::atomic<T>& slot(std::int64_t index) {
            return slots[static_cast<std::size_t>(index) & mask];
        }
        const std::size_t capacity;
        const std::size_t mask;
        std::unique_ptr<std::atomic<T>[]> slots;
    };

    // Owner only. Doubles the buffer, copying the live range [t, b). The old buffer is retired,
    // not freed (departure 3): a thief may have loaded its pointer and still read a slot.
    Buffer* grow(Buffer* old, std::int64_t t, std::int64_t b) {
        auto bigger = std::make_unique<Buffer>(old->capacity * 2);
        for (std::int64_t i = t; i < b; ++i) {
            bigger->slot(i).store(old->slot(i).load(std::memory_order_relaxed),
                                  std::memory_order_relaxed);
        }
        Buffer* raw = bigger.get();
        buffers_.push_back(std::move(bigger));
        // release: pairs with steal()'s acquire load of buffer_, publishing the copied slots.
        buffer_.store(raw, std::memory_order_release);
        return raw;
    }

    // Thieves write top_, the owner writes bottom_: separate cache lines.
    alignas(kCacheLine) std::atomic<std::int64_t> top_{0};
    alignas(kCacheLine) std::atomic<std::int64_t> bottom_{0};
    alignas(kCacheLine) std::atomic<Buffer*> buffer_{nullptr};
    // Owner only: the live buffer (last) and every retired one, freed at destruction.
    std::vector<std::unique_ptr<Buffer>> buffers_;

    static_assert(std::atomic<std::int64_t>::is_always_lock_free);
    static_assert(std::atomic<Buffer*>::is_always_lock_free);
};

// The owner's handle: the only way to push and pop. Move-only, so there is one owner; its thread
// (or a thread it was handed to with a happens-before) is the only one that may use it.
template <class T>
class DequeOwner {
  public:
    // capacity: initial number of slots, rounded up to a power of two (at least 2).
    explicit DequeOwner(std::size_t capacity = 1024)
        : deque_(std::make_shared<ChaseLevDeque<T>>(capacity)) {}
    DequeOwner(DequeOwner&&) noexcept = default;
    DequeOwner& operator=(DequeOwner&&) noexcept = default;
    DequeOwner(const DequeOwner&) = delete;
    DequeOwner& operator=(const DequeOwner&) = delete;

    // Appends at the bottom; grows the buffer when full. Fails only by std::bad_alloc.
    void push(T item) { deque_->push(item); }
    // Takes the most recently pushed item (LIFO), or nullopt when empty.
    std::optional<T> pop() { return deque_->pop(); }
    // Current number of slots.
    [[nodiscard]] std::size_t capacity() const { return deque_->capacity(); }
    [[nodiscard]] std::size_t size_estimate() const { return deque_->size_estimate(); }
    [[nodiscard]] bool empty_estimate() const { return deque_->empty_estimate(); }

    // A thief's handle on this deque, for any thread; it keeps the deque alive.
    [[nodiscard]] DequeStealer<T> stealer() const { return DequeStealer<T>(deque_); }

  private:
    std::shared_ptr<ChaseLevDeque<T>> deque_;
};

// A thief's handle: steals from the top, from any thread. Copyable; cannot push or pop.
template <class T>
class DequeStealer {
  public:
    // Takes the oldest item (FIFO end). Empty, Success, or Retry on a lost race.
    Stolen<T> steal() const { return deque_->steal(); }

    // Steals about half of the deque's items (at most `max_items`), one CAS per item (see "Batch
    // stealing"), into the calling thread's own deque `into`. Returns the first stolen item for
    // the caller to run; the others are pushed onto `into`. `count` says how many were taken in
    // all. Stops early at the first Empty or Retry after one success.
    Stolen<T> steal_batch(DequeOwner<T>& into, std::size_t max_items) const {
        Stolen<T> first = steal();
        if (!first.success()) return first;
        std::size_t want = deque_->size_estimate() / 2;  // about half of what remains
        if (want + 1 > max_items) want = max_items > 0 ? max_items - 1 : 0;
        for (std::size_t i = 0; i < want; ++i) {
            Stolen<T> next = steal();
            if (!next.success()) break;
            into.push(next.value);
            ++first.count;
        }
        return first;
    }

    [[nodiscard]] std::size_t size_estimate() const { return deque_->size_estimate(); }
    [[nodiscard]] bool empty_estimate() const { return deque_->empty_estimate(); }

  private:
    friend class DequeOwner<T>;
    explicit DequeStealer(std::shared_ptr<ChaseLevDeque<T>> deque) : deque_(std::move(deque)) {}
    std::shared_ptr<ChaseLevDeque<T>> deque_;
};

}  // namespace wsindex::core
