//! Models built in code: the engine's own demo content, needing no files.
//!
//! [`Trident`] is seed 000's whitebox; [`Character`] the viewer's default
//! character.

mod character;
mod trident;
mod tube;

pub use character::{Character, CharacterDesc};
pub use trident::Trident;
