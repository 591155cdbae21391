//! tree-sitter's C allocations on mimalloc.
//!
//! Parsing and re-parsing mutants makes and frees millions of small tree nodes, and
//! tree-sitter's C core allocates them with the C library's `malloc` unless told otherwise:
//! listing ripgrep's mutants spent about a tenth of its CPU in glibc's allocator
//! (`malloc`, `_int_free`, `malloc_consolidate`). Routed to mimalloc, the same listing takes
//! about 11% less CPU and 8% less wall time, with the same output (`cargo xtask bench
//! mutate`; docs/mutation.md, "Speed"). Rust's own allocations stay on the system
//! allocator: moving them too changed nothing measurable.

use std::sync::Once;

static INSTALLED: Once = Once::new();

/// Makes tree-sitter allocate with mimalloc. Each binary calls it first thing in `main`,
/// before any parser or tree exists: memory allocated by one allocator must never be freed
/// by the other, and tree-sitter reads the allocator anew at each call. Calling it again
/// does nothing.
pub fn install() {
    INSTALLED.call_once(|| {
        // SAFETY: called before any tree-sitter object exists (see above), and only once, so
        // no memory crosses from one allocator to the other. The four functions are
        // mimalloc's drop-in equivalents of malloc, calloc, realloc and free.
        unsafe {
            tree_sitter::set_allocator(Some(tree_sitter::Allocator {
                malloc: libmimalloc_sys::mi_malloc,
                calloc: libmimalloc_sys::mi_calloc,
                realloc: libmimalloc_sys::mi_realloc,
                free: libmimalloc_sys::mi_free,
            }));
        }
    });
}
