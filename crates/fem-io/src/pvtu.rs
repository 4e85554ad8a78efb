//! The `.pvtu` file of a frame written in pieces (one `.vtu` per process of a distributed
//! run): it names the pieces and declares their arrays, and ParaView or VTK's
//! `vtkXMLPUnstructuredGridReader` reads them as one dataset.

use std::io::Write;
use std::path::Path;

use crate::OutputError;
use crate::atomic::write_atomically;
use crate::vtu::Frame;

/// Writes `path` (atomically), the parallel file of the pieces `pieces` (file names relative
/// to `path`'s directory), each written by [`write_vtu`](crate::write_vtu) with the arrays of
/// `frame` (any piece's frame: only its field names and sizes are read).
///
/// # Errors
/// [`OutputError::Io`] on any file error, naming the file.
pub fn write_pvtu(path: &Path, frame: &Frame<'_>, pieces: &[String]) -> Result<(), OutputError> {
    let mut xml = String::new();
    xml.push_str("<?xml version=\"1.0\"?>\n");
    xml.push_str(
        "<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n",
    );
    xml.push_str("  <PUnstructuredGrid GhostLevel=\"0\">\n");
    let arrays = |xml: &mut String, tag: &str, fields: &[crate::Field<'_>], ghosts: bool| {
        let vectors = fields.iter().find(|f| f.n_components == 3);
        let scalars = fields.iter().find(|f| f.n_components == 1);
        xml.push_str(&format!("    <{tag}"));
        if let Some(s) = scalars {
            xml.push_str(&format!(" Scalars=\"{}\"", escape(s.name)));
        }
        if let Some(v) = vectors {
            xml.push_str(&format!(" Vectors=\"{}\"", escape(v.name)));
        }
        xml.push_str(">\n");
        for f in fields {
            xml.push_str(&format!(
                "      <PDataArray type=\"Float64\" Name=\"{}\" NumberOfComponents=\"{}\"/>\n",
                escape(f.name),
                f.n_components
            ));
        }
        if ghosts {
            xml.push_str(
                "      <PDataArray type=\"UInt8\" Name=\"vtkGhostType\" NumberOfComponents=\"1\"/>\n",
            );
        }
        xml.push_str(&format!("    </{tag}>\n"));
    };
    let ghost_points = frame.ghost_points.is_some();
    arrays(&mut xml, "PPointData", &frame.point_data, ghost_points);
    arrays(&mut xml, "PCellData", &frame.cell_data, false);
    xml.push_str("    <PPoints>\n      <PDataArray type=\"Float64\" NumberOfComponents=\"3\"/>\n    </PPoints>\n");
    for p in pieces {
        xml.push_str(&format!("    <Piece Source=\"{}\"/>\n", escape(p)));
    }
    xml.push_str("  </PUnstructuredGrid>\n</VTKFile>\n");
    write_atomically(path, false, |w, tmp| {
        w.write_all(xml.as_bytes())
            .map_err(|e| OutputError::io("write", tmp, e))
    })
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Field, VtkCells};

    #[test]
    fn names_pieces_and_arrays() {
        let dir = std::env::temp_dir().join(format!("fem-pvtu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let points = [[0.0; 3]];
        let cells = VtkCells::new();
        let u = [0.0; 3];
        let frame = Frame::new(&points, &cells).with_point_field(Field::vector("displacement", &u));
        let path = dir.join("x.pvtu");
        write_pvtu(&path, &frame, &["x_0.vtu".into(), "x_1.vtu".into()]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("<Piece Source=\"x_1.vtu\"/>"));
        assert!(text.contains("Name=\"displacement\" NumberOfComponents=\"3\""));
        assert!(!text.contains("vtkGhostType"));
        let ghost = [1u8];
        write_pvtu(&path, &frame.with_ghost_points(&ghost), &["x_0.vtu".into()]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("<PDataArray type=\"UInt8\" Name=\"vtkGhostType\""));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
