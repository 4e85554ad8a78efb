//! One allocation over 1 GiB ends the fuzzing run as a crash (SIGABRT, the input saved in
//! `artifacts/`). libFuzzer's own `-malloc_limit_mb` works through a sanitizer's malloc hooks,
//! which a stable, sanitizer-free build does not have; this global allocator stands in for it.
//! (Memory that grows in many smaller pieces is caught by `-rss_limit_mb`.)

use std::alloc::{GlobalAlloc, Layout, System};

/// The largest single allocation a fuzzed input may make.
const LIMIT: usize = 1 << 30;

/// [`System`], refusing any single allocation above [`LIMIT`].
pub struct Limited;

fn check(size: usize) {
    if size > LIMIT {
        // Nothing here may allocate: a fixed message, then abort (libFuzzer reports the signal).
        use std::io::Write;
        let _ = std::io::stderr().write_all(b"==fuzz== one allocation of more than 1 GiB\n");
        std::process::abort();
    }
}

// SAFETY: every call is forwarded to `System` with the same arguments; `check` only reads
// the size.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        // SAFETY: the caller's contract for `alloc`, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        // SAFETY: the caller's contract for `alloc_zeroed`, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        // SAFETY: the caller's contract for `realloc`, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Limited = Limited;
