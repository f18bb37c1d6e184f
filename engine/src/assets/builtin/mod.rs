//! Models built in code: the engine's own demo content, needing no files.

mod trident;

pub use trident::Trident;
