//! An rpath to the libtorch folder torch-sys linked against (it passes it on as
//! `DEP_TCH_LIBTORCH_LIB`, its `links` key being "tch"), so that programs and tests using
//! libtorch run without LD_LIBRARY_PATH. Without the libtorch feature there is nothing to do.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
