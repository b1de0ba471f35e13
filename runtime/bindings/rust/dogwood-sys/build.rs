//! Links libdogwood.so: from DOGWOOD_LIB_DIR (an installed lib directory),
//! else the dwc build tree this crate sits in (../../../../build), where
//! `make` leaves libdogwood.so.  No pkg-config, no external crates.
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=DOGWOOD_LIB_DIR");
    let dir = match env::var_os("DOGWOOD_LIB_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
            .join("../../../../build"),
    };
    if !dir.join("libdogwood.so").exists() {
        println!("cargo:warning=no libdogwood.so in {} (set DOGWOOD_LIB_DIR or run make)", dir.display());
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=dogwood");
    println!("cargo:lib_dir={}", dir.display());
}
