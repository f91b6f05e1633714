//! An rpath to the libtorch folder torch-sys linked against (it passes it on as
//! `DEP_TCH_LIBTORCH_LIB`, its `links` key being "tch"), so that programs and tests using
//! libtorch run without LD_LIBRARY_PATH. Without the libtorch feature there is nothing to do.
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        // A CUDA libtorch (`setup-libtorch.sh --cuda`): torch-sys links libtorch_cuda.so
        // under the linker's --as-needed, which drops it (no symbol of it is referenced
        // directly), and libtorch then sees no GPU. Keep it (seen on an H200, 2026-11-26).
        if Path::new(&dir).join("libtorch_cuda.so").exists() {
            println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
        }
    }
}
