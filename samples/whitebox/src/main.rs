//! Seed 000's whitebox trident: 15 vertices, 13 triangles, 7 joints,
//! skinned on the GPU through the 4x3 uniform palette and drawn in
//! wireframe with a marker per joint. Opens a window when a display exists;
//! `--headless --frames N --out DIR` writes N PNG frames instead.
//!
//! In debug builds (or with `--validation`) the validation layer and
//! synchronization validation are on, and the run exits non-zero if the
//! messenger recorded any warning or error.

mod scene;

fn main() -> std::process::ExitCode {
    whitebox::run::<scene::Scene>()
}
