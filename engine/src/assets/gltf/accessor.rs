//! Accessors read with every offset, stride and count checked against the
//! buffer view and buffer before anything is allocated.

use gltf::json::accessor::{ComponentType, GenericComponentType, IndexComponentType, Type};
use gltf::json::validation::Checked;

use super::super::FaultKind;
use super::ctx::Ctx;

/// The shape of an accessor's elements.
#[derive(Clone, Copy, Debug)]
pub(super) struct Layout {
    pub count: usize,
    /// Components per element.
    pub comps: usize,
    pub ctype: ComponentType,
    pub normalized: bool,
    pub kind: Type,
}

fn valid_ctype(c: &Checked<GenericComponentType>) -> Checked<ComponentType> {
    match c {
        Checked::Valid(c) => Checked::Valid(c.0),
        Checked::Invalid => Checked::Invalid,
    }
}

fn valid_index_ctype(c: &Checked<IndexComponentType>) -> Checked<ComponentType> {
    match c {
        Checked::Valid(c) => Checked::Valid(c.0),
        Checked::Invalid => Checked::Invalid,
    }
}

fn comps_of(t: Type) -> usize {
    match t {
        Type::Scalar => 1,
        Type::Vec2 => 2,
        Type::Vec3 => 3,
        Type::Vec4 => 4,
        Type::Mat2 => 4,
        Type::Mat3 => 9,
        Type::Mat4 => 16,
    }
}

fn size_of(c: ComponentType) -> usize {
    match c {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

pub(super) fn type_name(t: Type) -> &'static str {
    match t {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

pub(super) fn ctype_name(c: ComponentType) -> &'static str {
    match c {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

/// One component as a float, with the spec's normalisation of integers
/// (`max(c / 127, -1)` and friends) when `normalized`.
fn decode_f32(b: &[u8], c: ComponentType, normalized: bool) -> f32 {
    match c {
        ComponentType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        ComponentType::U8 if normalized => b[0] as f32 / 255.0,
        ComponentType::U8 => b[0] as f32,
        ComponentType::I8 if normalized => (b[0] as i8 as f32 / 127.0).max(-1.0),
        ComponentType::I8 => b[0] as i8 as f32,
        ComponentType::U16 if normalized => u16::from_le_bytes([b[0], b[1]]) as f32 / 65535.0,
        ComponentType::U16 => u16::from_le_bytes([b[0], b[1]]) as f32,
        ComponentType::I16 if normalized => {
            (i16::from_le_bytes([b[0], b[1]]) as f32 / 32767.0).max(-1.0)
        }
        ComponentType::I16 => i16::from_le_bytes([b[0], b[1]]) as f32,
        ComponentType::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
    }
}

/// One unsigned integer component; other types read as zero (callers only
/// ask for unsigned types).
fn decode_u32(b: &[u8], c: ComponentType) -> u32 {
    match c {
        ComponentType::U8 => b[0] as u32,
        ComponentType::U16 => u16::from_le_bytes([b[0], b[1]]) as u32,
        ComponentType::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        _ => 0,
    }
}

impl Ctx<'_> {
    /// Accessor `index`, referred to from `from`, and its layout.
    pub(super) fn layout(&self, index: usize, from: &str) -> Result<Layout, LoadError> {
        let n = self.root.accessors.len();
        let Some(acc) = self.root.accessors.get(index) else {
            return Err(self.err(
                from,
                FaultKind::OutOfRange,
                format!("refers to accessors[{index}], but the file has {n} accessors"),
            ));
        };
        let item = format!("accessors[{index}]");
        let Checked::Valid(ctype) = valid_ctype(&acc.component_type) else {
            return Err(self.err(&item, FaultKind::Invalid, "invalid componentType"));
        };
        let Checked::Valid(kind) = acc.type_ else {
            return Err(self.err(&item, FaultKind::Invalid, "invalid type"));
        };
        let count = usize::try_from(acc.count.0).map_err(|_| {
            self.err(
                &item,
                FaultKind::Count,
                format!("count {} is too large", acc.count.0),
            )
        })?;
        Ok(Layout {
            count,
            comps: comps_of(kind),
            ctype,
            normalized: acc.normalized,
            kind,
        })
    }

    /// Reads every component of accessor `index` (referred to from `from`)
    /// through `decode`, into `count * comps` values. Sparse substitutions
    /// are applied. The output is charged to the allocation budget first.
    fn read_with<T: Copy>(
        &mut self,
        index: usize,
        from: &str,
        zero: T,
        decode: impl Fn(&[u8], ComponentType, bool) -> T,
    ) -> Result<(Vec<T>, Layout), LoadError> {
        let lay = self.layout(index, from)?;
        let item = format!("accessors[{index}]");
        let csize = size_of(lay.ctype);
        // Matrices of 1- and 2-byte components have padded columns; nothing
        // this loader reads uses them.
        if matches!(lay.kind, Type::Mat2 | Type::Mat3) && csize < 4 {
            return Err(self.err(
                &item,
                FaultKind::Unsupported,
                format!(
                    "{} of {} (padded matrix columns) is not supported",
                    type_name(lay.kind),
                    ctype_name(lay.ctype)
                ),
            ));
        }
        let elem = lay.comps * csize;
        let values = lay.count.checked_mul(lay.comps).ok_or_else(|| {
            self.err(
                &item,
                FaultKind::Count,
                format!("count {} overflows", lay.count),
            )
        })?;
        let Some(acc) = self.root.accessors.get(index) else {
            return Err(self.err(from, FaultKind::OutOfRange, "accessor vanished"));
        };
        let offset = acc.byte_offset.map_or(0, |o| o.0);
        // Where the dense data lies, checked before allocating.
        let dense = match acc.buffer_view {
            Some(v) => {
                let (data, stride) = self.view_slice(v.value(), &format!("{item}.bufferView"))?;
                let stride = stride.unwrap_or(elem);
                if stride < elem {
                    return Err(self.err(
                        &format!("bufferViews[{}]", v.value()),
                        FaultKind::Invalid,
                        format!(
                            "byteStride {stride} is smaller than {item}'s {elem}-byte elements"
                        ),
                    ));
                }
                let need = if lay.count == 0 {
                    Some(0)
                } else {
                    (lay.count as u64 - 1)
                        .checked_mul(stride as u64)
                        .and_then(|x| x.checked_add(elem as u64))
                        .and_then(|x| x.checked_add(offset))
                };
                match need {
                    Some(need) if need <= data.len() as u64 => {}
                    _ => {
                        return Err(self.err(
                            &item,
                            FaultKind::OutOfRange,
                            format!(
                                "{} elements of {elem} bytes, stride {stride}, from byteOffset {offset} need more than the {} bytes of bufferViews[{}]",
                                lay.count,
                                data.len(),
                                v.value()
                            ),
                        ))
                    }
                }
                Some((v.value(), offset as usize, stride))
            }
            None if acc.sparse.is_some() => None,
            None => {
                return Err(self.err(
                    &item,
                    FaultKind::MissingReference,
                    "neither a bufferView nor sparse data",
                ))
            }
        };
        self.charge(
            (values as u64).saturating_mul(std::mem::size_of::<T>() as u64),
            &item,
        )?;
        let mut out = Vec::with_capacity(values);
        match dense {
            Some((v, offset, stride)) => {
                let (data, _) = self.view_slice(v, &item)?;
                for e in 0..lay.count {
                    let at = offset + e * stride;
                    let Some(el) = data.get(at..at + elem) else {
                        return Err(self.err(
                            &item,
                            FaultKind::OutOfRange,
                            "element outside its view",
                        ));
                    };
                    for c in el.chunks_exact(csize) {
                        out.push(decode(c, lay.ctype, lay.normalized));
                    }
                }
            }
            None => out.resize(values, zero),
        }
        if let Some(sparse) = &acc.sparse {
            let sitem = format!("{item}.sparse");
            let n = usize::try_from(sparse.count.0).unwrap_or(usize::MAX);
            if n > lay.count {
                return Err(self.err(
                    &sitem,
                    FaultKind::Count,
                    format!(
                        "{n} sparse values for an accessor of {} elements",
                        lay.count
                    ),
                ));
            }
            let Checked::Valid(ictype) = valid_index_ctype(&sparse.indices.component_type) else {
                return Err(self.err(&sitem, FaultKind::Invalid, "invalid indices componentType"));
            };
            let isize_ = size_of(ictype);
            let (idata, _) = self.view_slice(
                sparse.indices.buffer_view.value(),
                &format!("{sitem}.indices.bufferView"),
            )?;
            let ioff = sparse.indices.byte_offset.0;
            let (vdata, _) = self.view_slice(
                sparse.values.buffer_view.value(),
                &format!("{sitem}.values.bufferView"),
            )?;
            let voff = sparse.values.byte_offset.0;
            let fits = |off: u64, size: usize, len: usize| {
                (n as u64)
                    .checked_mul(size as u64)
                    .and_then(|x| x.checked_add(off))
                    .is_some_and(|end| end <= len as u64)
            };
            if !fits(ioff, isize_, idata.len()) || !fits(voff, elem, vdata.len()) {
                return Err(self.err(
                    &sitem,
                    FaultKind::OutOfRange,
                    format!("{n} sparse indices or values run past their buffer views"),
                ));
            }
            let (ioff, voff) = (ioff as usize, voff as usize);
            for k in 0..n {
                let ib = &idata[ioff + k * isize_..ioff + (k + 1) * isize_];
                let target = decode_u32(ib, ictype) as usize;
                if target >= lay.count {
                    return Err(self.err(
                        &sitem,
                        FaultKind::OutOfRange,
                        format!(
                            "sparse index {target} outside the accessor's {} elements",
                            lay.count
                        ),
                    ));
                }
                let vb = &vdata[voff + k * elem..voff + (k + 1) * elem];
                for (c, cb) in vb.chunks_exact(csize).enumerate() {
                    out[target * lay.comps + c] = decode(cb, lay.ctype, lay.normalized);
                }
            }
        }
        Ok((out, lay))
    }

    /// The bytes of buffer view `v` (checked to lie inside its buffer) and
    /// its byte stride.
    fn view_slice(&self, v: usize, from: &str) -> Result<(&[u8], Option<usize>), LoadError> {
        let Some(view) = self.root.buffer_views.get(v) else {
            return Err(self.err(
                from,
                FaultKind::OutOfRange,
                format!(
                    "refers to bufferViews[{v}], but the file has {}",
                    self.root.buffer_views.len()
                ),
            ));
        };
        let item = format!("bufferViews[{v}]");
        let b = view.buffer.value();
        let Some(buf) = self.buffers.get(b) else {
            return Err(self.err(
                &item,
                FaultKind::OutOfRange,
                format!(
                    "refers to buffers[{b}], but the file has {}",
                    self.buffers.len()
                ),
            ));
        };
        let off = view.byte_offset.map_or(0, |o| o.0);
        let len = view.byte_length.0;
        let Some(end) = off.checked_add(len).filter(|&e| e <= buf.len() as u64) else {
            return Err(self.err(
                &item,
                FaultKind::OutOfRange,
                format!(
                    "bytes {off}..{} lie outside the {} bytes of buffers[{b}]",
                    off as u128 + len as u128,
                    buf.len()
                ),
            ));
        };
        let stride = view.byte_stride.map(|s| s.0);
        if stride == Some(0) {
            return Err(self.err(&item, FaultKind::Invalid, "byteStride 0"));
        }
        Ok((&buf[off as usize..end as usize], stride))
    }

    /// The raw bytes of buffer view `v` (for embedded images).
    pub(super) fn view_bytes(&self, v: usize, from: &str) -> Result<&[u8], LoadError> {
        self.view_slice(v, from).map(|(b, _)| b)
    }

    /// Accessor `index` as floats (integers converted, normalised ones
    /// scaled), checked to be of one of `types` and finite.
    pub(super) fn read_floats(
        &mut self,
        index: usize,
        from: &str,
        types: &[Type],
    ) -> Result<(Vec<f32>, Layout), LoadError> {
        let lay = self.layout(index, from)?;
        self.expect_type(index, lay, types)?;
        let (v, lay) = self.read_with(index, from, 0.0f32, decode_f32)?;
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(self.err(
                &format!("accessors[{index}]"),
                FaultKind::NonFinite,
                format!("element {} holds {}", i / lay.comps.max(1), v[i]),
            ));
        }
        Ok((v, lay))
    }

    /// Accessor `index` as unsigned integers: of one of `types`, with an
    /// unsigned component type in `ctypes`.
    pub(super) fn read_uints(
        &mut self,
        index: usize,
        from: &str,
        types: &[Type],
        ctypes: &[ComponentType],
    ) -> Result<(Vec<u32>, Layout), LoadError> {
        let lay = self.layout(index, from)?;
        self.expect_type(index, lay, types)?;
        if !ctypes.contains(&lay.ctype) {
            let names: Vec<_> = ctypes.iter().map(|&c| ctype_name(c)).collect();
            return Err(self.err(
                &format!("accessors[{index}]"),
                FaultKind::Invalid,
                format!(
                    "componentType {} where {from} needs one of {}",
                    ctype_name(lay.ctype),
                    names.join(", ")
                ),
            ));
        }
        self.read_with(index, from, 0u32, |b, c, _| decode_u32(b, c))
    }

    fn expect_type(&self, index: usize, lay: Layout, types: &[Type]) -> Result<(), LoadError> {
        if types.contains(&lay.kind) {
            return Ok(());
        }
        let names: Vec<_> = types.iter().map(|&t| type_name(t)).collect();
        Err(self.err(
            &format!("accessors[{index}]"),
            FaultKind::Invalid,
            format!(
                "type {} where {} is needed",
                type_name(lay.kind),
                names.join(" or ")
            ),
        ))
    }
}

use super::super::LoadError;
