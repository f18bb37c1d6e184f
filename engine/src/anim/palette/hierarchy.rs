//! The palette's hierarchy: the order in which dual-quaternion signs are
//! chosen and the entry each one follows.

use super::skin::Skin;
use crate::anim::{AnimError, Skeleton, NO_PARENT};

/// The order in which dual-quaternion signs are chosen and, for each
/// palette entry, the entry whose hemisphere it joins: its nearest ancestor
/// in the skeleton that is also in the skin. Built once per skin.
#[derive(Clone, Debug, PartialEq)]
pub struct PaletteHierarchy {
    /// Palette entries, ancestors before descendants.
    pub order: Vec<u16>,
    /// Per palette entry, the entry it follows, or [`NO_PARENT`].
    pub parent: Vec<u16>,
}

impl PaletteHierarchy {
    /// No neighbours: every entry is put in the identity's hemisphere.
    pub fn flat(len: usize) -> Self {
        Self {
            order: (0..len as u16).collect(),
            parent: vec![NO_PARENT; len],
        }
    }

    /// The hierarchy of a sub-palette whose entry `k` is this palette's
    /// entry `bones[k]` (a bone partition): each entry follows its nearest
    /// ancestor, through this hierarchy, that the sub-palette also holds.
    /// Entries of `bones` outside this palette become roots.
    pub fn restrict(&self, bones: &[u16]) -> Self {
        let n = self.parent.len();
        let mut local = vec![NO_PARENT; n];
        for (k, &b) in bones.iter().enumerate() {
            if (b as usize) < n && local[b as usize] == NO_PARENT {
                local[b as usize] = k as u16;
            }
        }
        let mut rank = vec![usize::MAX; n];
        for (r, &e) in self.order.iter().enumerate() {
            if let Some(slot) = rank.get_mut(e as usize) {
                *slot = r;
            }
        }
        let mut order: Vec<u16> = (0..bones.len() as u16).collect();
        order.sort_by_key(|&k| rank.get(bones[k as usize] as usize).copied().unwrap_or(0));
        let parent = bones
            .iter()
            .map(|&b| {
                let mut a = self.parent.get(b as usize).copied().unwrap_or(NO_PARENT);
                // At most `n` steps: a malformed (cyclic) hierarchy cannot hang.
                for _ in 0..n {
                    if a == NO_PARENT || a as usize >= n {
                        return NO_PARENT;
                    }
                    if local[a as usize] != NO_PARENT {
                        return local[a as usize];
                    }
                    a = self.parent[a as usize];
                }
                NO_PARENT
            })
            .collect();
        Self { order, parent }
    }

    /// The hierarchy of `skin`'s entries, from `skeleton`'s parents; an error
    /// if the skin does not fit the skeleton.
    pub fn new(skin: &Skin, skeleton: &Skeleton) -> Result<Self, AnimError> {
        skin.validate(skeleton)?;
        let mut entry_of = vec![NO_PARENT; skeleton.len()];
        for (k, &j) in skin.joints.iter().enumerate() {
            if entry_of[j as usize] == NO_PARENT {
                entry_of[j as usize] = k as u16;
            }
        }
        let mut order: Vec<u16> = (0..skin.len() as u16).collect();
        order.sort_by_key(|&k| skin.joints[k as usize]);
        let parent = skin
            .joints
            .iter()
            .map(|&j| {
                let mut a = skeleton.parent(j as usize);
                while let Some(p) = a {
                    if entry_of[p] != NO_PARENT {
                        return entry_of[p];
                    }
                    a = skeleton.parent(p);
                }
                NO_PARENT
            })
            .collect();
        Ok(Self { order, parent })
    }
}
