//! `viewer [FILE]`: see the library's docs and `viewer --help`.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    viewer::run(viewer::Args::parse())
}
