//! Unit tests of the texture readers.
