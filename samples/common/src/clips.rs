//! `--clips FILE.vkclip`: a clip file's clips played on a model's meshes.
//! The file's skeleton must be the model's: the same joint count, the
//! same names in the same order and the same parents; otherwise an `Err`
//! naming both files and the first difference.

use std::path::Path;

use vkskin::anim::Skeleton;
use vkskin::assets::Model;

/// Replaces `model`'s clips with those of the clip file at `clips` (read
/// with [`vkskin::assets::load`]); `label` names the model in errors.
pub fn attach(model: &mut Model, label: &str, clips: &Path) -> Result<(), String> {
    let file = vkskin::assets::load(clips).map_err(|e| e.to_string())?;
    if !file.meshes.is_empty() {
        return Err(format!(
            "--clips {}: not a clip file (it has meshes); write one with inspect --compress",
            clips.display()
        ));
    }
    if file.clips.is_empty() {
        return Err(format!(
            "--clips {}: the file has no clips",
            clips.display()
        ));
    }
    check_skeletons(&model.skeleton, label, &file.skeleton, clips)?;
    model.clips = file.clips;
    Ok(())
}

/// `Ok` when `clips`' skeleton is `model`'s (count, names, parents).
pub fn check_skeletons(
    model: &Skeleton,
    label: &str,
    clips: &Skeleton,
    clips_file: &Path,
) -> Result<(), String> {
    let both = || format!("{} does not animate {label}", clips_file.display());
    if model.len() != clips.len() {
        return Err(format!(
            "{}: its skeleton has {} joints, the model's {}",
            both(),
            clips.len(),
            model.len()
        ));
    }
    for (j, (a, b)) in model.names().iter().zip(clips.names()).enumerate() {
        if a != b {
            return Err(format!(
                "{}: joint {j} is {b:?} in the clip file, {a:?} in the model",
                both()
            ));
        }
    }
    for j in 0..model.len() {
        if model.parent(j) != clips.parent(j) {
            return Err(format!(
                "{}: joint {j} ({:?}) has parent {:?} in the clip file, {:?} in the model",
                both(),
                model.names()[j],
                clips.parent(j),
                model.parent(j)
            ));
        }
    }
    Ok(())
}
