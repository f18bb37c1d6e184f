//! Models built in code: the engine's own demo content, needing no files.
//!
//! [`Trident`] is seed 000's whitebox; [`Strip`] seed 002's strip; [`Character`] the viewer's default
//! character; [`TwistCylinder`] the candy-wrapper comparison of linear and
//! dual-quaternion skinning; [`MorphBlob`] the morph-target demo (four
//! named targets animated by a clip); [`procedural`] generates test and benchmark
//! content from counts and seeds.

mod character;
mod morph_blob;
pub mod procedural;
mod seed;
mod strip;
mod trident;
mod tube;
mod twist;

pub use character::{Character, CharacterDesc};
pub use morph_blob::MorphBlob;
pub use strip::Strip;
pub use trident::Trident;
pub use twist::TwistCylinder;
