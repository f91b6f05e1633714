//! The organizer's four vendors (`vendors.rs`): hardware, runtime and validity travel
//! with every figure.

use crate::vendors::four_vendors;

#[test]
#[ignore]
fn keep_vendors() {
    let v = four_vendors();
    let keep = std::path::Path::new("/tmp/vendors");
    let _ = std::fs::remove_dir_all(keep);
    crate::fixtures::copy_tree(v.root.path(), keep);
}
