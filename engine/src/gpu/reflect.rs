//! Just enough SPIR-V reflection to check that host-side structs mirror
//! shader blocks: member offsets and array strides of a named struct type.

use std::collections::HashMap;

const OP_NAME: u16 = 5;
const OP_MEMBER_NAME: u16 = 6;
const OP_TYPE_ARRAY: u16 = 28;
const OP_TYPE_RUNTIME_ARRAY: u16 = 29;
const OP_TYPE_STRUCT: u16 = 30;
const OP_DECORATE: u16 = 71;
const OP_MEMBER_DECORATE: u16 = 72;
const DECORATION_ARRAY_STRIDE: u32 = 6;
const DECORATION_OFFSET: u32 = 35;

/// One member of a struct as the shader lays it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberLayout {
    /// The member's name (empty when the module has no name for it).
    pub name: String,
    /// Byte offset from the start of the struct.
    pub offset: u32,
    /// For array members: the byte stride between elements.
    pub array_stride: Option<u32>,
}

/// The explicit layout of a struct type (a block or a struct inside one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    /// The struct type's name.
    pub name: String,
    /// The members, in declaration order.
    pub members: Vec<MemberLayout>,
}

impl BlockLayout {
    /// The member named `name`.
    pub fn member(&self, name: &str) -> Option<&MemberLayout> {
        self.members.iter().find(|m| m.name == name)
    }
}

fn string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The layout of the struct type named `type_name` (the GLSL block or
/// struct name, not the instance name), or `None` if the module has no
/// such type with explicit offsets.
pub fn struct_layout(spirv: &[u32], type_name: &str) -> Option<BlockLayout> {
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut member_names: HashMap<(u32, u32), String> = HashMap::new();
    let mut offsets: HashMap<(u32, u32), u32> = HashMap::new();
    let mut strides: HashMap<u32, u32> = HashMap::new();
    let mut structs: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut arrays: HashMap<u32, ()> = HashMap::new();
    let mut i = 5;
    while i < spirv.len() {
        let count = (spirv[i] >> 16) as usize;
        let op = (spirv[i] & 0xffff) as u16;
        if count == 0 || i + count > spirv.len() {
            return None;
        }
        let a = &spirv[i + 1..i + count];
        match op {
            OP_NAME if !a.is_empty() => {
                names.insert(a[0], string(&a[1..]));
            }
            OP_MEMBER_NAME if a.len() >= 2 => {
                member_names.insert((a[0], a[1]), string(&a[2..]));
            }
            OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY if !a.is_empty() => {
                arrays.insert(a[0], ());
            }
            OP_TYPE_STRUCT if !a.is_empty() => {
                structs.insert(a[0], a[1..].to_vec());
            }
            OP_DECORATE if a.len() >= 3 && a[1] == DECORATION_ARRAY_STRIDE => {
                strides.insert(a[0], a[2]);
            }
            OP_MEMBER_DECORATE if a.len() >= 4 && a[2] == DECORATION_OFFSET => {
                offsets.insert((a[0], a[1]), a[3]);
            }
            _ => {}
        }
        i += count;
    }
    // Several struct ids may share a name (one per storage class
    // layout); take the first with explicit offsets.
    let mut ids: Vec<u32> = structs
        .keys()
        .copied()
        .filter(|id| names.get(id).is_some_and(|n| n == type_name))
        .collect();
    ids.sort_unstable();
    ids.into_iter().find_map(|id| {
        let member_types = &structs[&id];
        let members = member_types
            .iter()
            .enumerate()
            .map(|(m, ty)| {
                let m = m as u32;
                Some(MemberLayout {
                    name: member_names.get(&(id, m)).cloned().unwrap_or_default(),
                    offset: *offsets.get(&(id, m))?,
                    array_stride: arrays.get(ty).and_then(|_| strides.get(ty).copied()),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(BlockLayout {
            name: type_name.to_owned(),
            members,
        })
    })
}
