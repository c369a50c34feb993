// NodeCache: recycles the heap nodes that carry work items through the deques, so that spawning a
// task costs no allocation in steady state.
//
// Deque slots must be lock-free atomics, so a deque holds Node* and the item lives in the node.
// Nodes migrate: the worker that spawns allocates one, the worker that runs it (possibly a thief)
// frees it. Each worker keeps a private free list (owner-only, no synchronisation); when it grows
// past two magazines, one magazine (kMagazine nodes) goes to a shared depot, and a worker whose
// list is empty takes a magazine from the depot before carving a new slab. So a producer/thief pair
// that keeps moving nodes one way does not make memory grow without bound. The depot's mutex is
// taken once per kMagazine nodes. Slabs are freed when the cache is destroyed.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace wsindex::core {

template <class Item>
class NodeCache {
  public:
    struct Node {
        Node* next = nullptr;  // free-list link; meaningless while the node holds an item
        alignas(Item) unsigned char storage[sizeof(Item)];
        Item& item() { return *std::launder(reinterpret_cast<Item*>(storage)); }
    };

    // A worker's private free list. Owner only.
    struct Local {
        Node* head = nullptr;
        std::size_t count = 0;
    };

    NodeCache() = default;
    NodeCache(const NodeCache&) = delete;
    NodeCache& operator=(const NodeCache&) = delete;

    // Owner of `local`. Constructs `item` in a recycled or new node.
    Node* make(Local& local, Item&& item) {
        if (local.head == nullptr) refill(local);
        Node* node = local.head;
        local.head = node->next;
        --local.count;
        ::new (static_cast<void*>(node->storage)) Item(std::move(item));
        return node;
    }

    // Owner of `local`. Moves the item out, destroys it in the node and recycles the node.
    Item take(Local& local, Node* node) {
        Item out(std::move(node->item()));
        node->item().~Item();
        node->next = local.head;
        local.head = node;
        if (++local.count > 2 * kMagazine) spill(local);
        return out;
    }

  private:
    static constexpr std::size_t kMagazine = 64;  // nodes moved to/from the depot at once
    static constexpr std::size_t kSlab = 256;     // nodes carved per allocation

    void refill(Local& local) {
        {
            std::lock_guard lock(mutex_);
            if (!depot_.empty()) {
                local.head = depot_.back();
                depot_.pop_back();
                local.count = kMagazine;
                return;
            }
            slabs_.push_back(std::make_unique<Node[]>(kSlab));
            Node* slab = slabs_.back().get();
            for (std::size_t i = 0; i + 1 < kSlab; ++i) slab[i].next = &slab[i + 1];
            slab[kSlab - 1].next = nullptr;
            local.head = slab;
            local.count = kSlab;
        }
    }

    // Moves exactly kMagazine nodes from the front of `local` to the depot.
    void spill(Local& local) {
        Node* first = local.head;
        Node* last = first;
        for (std::size_t i = 1; i < kMagazine; ++i) last = last->next;
        local.head = last->next;
        local.count -= kMagazine;
        last->next = nullptr;
        std::lock_guard lock(mutex_);
        depot_.push_back(first);
    }

    std::mutex mutex_;
    std::vector<Node*> depot_;                    // magazines of exactly kMagazine nodes
    std::vector<std::unique_ptr<Node[]>> slabs_;  // every node ever made, freed at destruction
};

}  // namespace wsindex::core
