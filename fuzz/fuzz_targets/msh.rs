//! The Gmsh reader on arbitrary bytes: an error or a mesh, never a panic, a hang or an
//! allocation the file's size does not justify.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "allocation_limit.rs"]
mod allocation_limit;

fuzz_target!(|data: &[u8]| {
    if let Ok(mesh) = fem::mesh::read_msh_bytes(data, std::path::Path::new("fuzz.msh")) {
        // What `fem mesh` prints walks every block and group.
        let _ = mesh.summary();
    }
});
