//! Output folders named by the user (`generate --out`, `sweep --out`,
//! `sweep --slurm`, `cosim --fail-dir`): exanet replaces or removes only
//! files it wrote itself and that nobody changed since.
//!
//! Every such folder holds a ledger, [`LEDGER`], listing each file exanet
//! wrote there with the SHA-256 of what it wrote, plus patterns for files
//! that processes exanet launched write (a Slurm array task's results and
//! logs). Before a command changes anything it [`OutDir::prepare`]s the
//! whole change: every file it would overwrite or delete must be absent,
//! already hold the new bytes, be listed with its current SHA-256, or match
//! a pattern. Any other file (a user's, or one edited since) is a conflict:
//! the command refuses, listing them, and changes nothing; with `--force`
//! the conflicting files are moved into a dated backup folder inside the
//! output folder (`backup-YYYYMMDD-HHMMSS/`, same relative paths), never
//! deleted. Files the command does not touch stay as they are, whoever
//! wrote them. A folder without a ledger that is not empty (other than
//! folders that are themselves exanet's) is refused the same way.
//!
//! Each file is written to a temporary name beside it and renamed into
//! place, so a reader never sees half a file. The ledger is written before
//! the first change with the new hashes marked pending, and again after the
//! last one: a command killed half-way leaves a folder the next run accepts.

use crate::error::usage;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The ledger's file name, in the output folder's root.
pub const LEDGER: &str = ".exanet-owned.json";

/// How many conflicting files an error lists by name.
const LIST_MAX: usize = 12;

/// What the ledger holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Ledger {
    /// The commands that wrote into the folder (e.g. `exanet generate`).
    written_by: BTreeSet<String>,
    /// Files exanet wrote: relative path (`/`-separated) → SHA-256 (hex).
    files: BTreeMap<String, String>,
    /// Files being written when the ledger was last saved, with their new
    /// SHA-256: either the old or the new content is exanet's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pending: BTreeMap<String, String>,
    /// Files written by processes exanet launched, `dir/prefix*suffix`
    /// (one `*`, in the file name): exanet's whatever their content.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    patterns: BTreeSet<String>,
}

/// Why a file in the way of a change is not exanet's to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Foreign {
    /// Not in the ledger: somebody else's file.
    NotWritten,
    /// In the ledger, but its content changed since.
    Edited,
}

/// An output folder claimed by one command.
#[derive(Debug)]
pub struct OutDir {
    root: PathBuf,
    ledger: Ledger,
    force: bool,
    command: String,
    backup: Option<PathBuf>,
    /// Files moved into the backup folder by `--force` (relative paths).
    pub backed_up: Vec<String>,
}

/// SHA-256 of `bytes` as lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `root` joined with a `/`-separated relative path.
pub fn path_in(root: &Path, rel: &str) -> PathBuf {
    rel.split('/').fold(root.to_path_buf(), |p, s| p.join(s))
}

/// Does `rel` match the pattern `dir/prefix*suffix`?
fn matches(pattern: &str, rel: &str) -> bool {
    let (pdir, pname) = pattern.rsplit_once('/').unwrap_or(("", pattern));
    let (rdir, rname) = rel.rsplit_once('/').unwrap_or(("", rel));
    let Some((pre, suf)) = pname.split_once('*') else {
        return pattern == rel;
    };
    pdir == rdir
        && rname.len() >= pre.len() + suf.len()
        && rname.starts_with(pre)
        && rname.ends_with(suf)
}

/// The files under `dir` (relative to `base`, `/`-separated), recursively.
fn files_under(base: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    for entry in rd {
        let p = entry?.path();
        if p.is_dir() {
            files_under(base, &p, out)?;
        } else {
            let rel = p.strip_prefix(base).unwrap_or(&p);
            out.push(
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/"),
            );
        }
    }
    Ok(())
}

/// Files under `dir` that are not exanet's: any file, except inside folders
/// that hold a ledger (nested output folders, e.g. `out/cosim` inside
/// `out`). Relative to `base`, sorted.
fn foreign_entries(base: &Path, dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let rd = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in rd {
        let p = entry?.path();
        let rel = p
            .strip_prefix(base)
            .unwrap_or(&p)
            .to_string_lossy()
            .replace('\\', "/");
        if p.is_dir() {
            if p.join(LEDGER).is_file() {
                continue;
            }
            // An empty folder holds nothing to lose.
            out.extend(foreign_entries(base, &p)?);
        } else {
            out.push(rel);
        }
    }
    out.sort();
    Ok(out)
}

/// Civil date and time (UTC) of a Unix time, as `YYYYMMDD-HHMMSS`.
fn stamp(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Days since 1970-01-01 to a proleptic Gregorian date (era arithmetic).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    )
}

impl OutDir {
    /// Claim `root` (created if missing) for `command` (e.g. `exanet
    /// generate`). Refuses a folder that has no ledger and is not empty,
    /// listing what is in it, unless `force`.
    pub fn claim(root: &Path, command: &str, force: bool) -> Result<OutDir> {
        let ledger_path = root.join(LEDGER);
        let ledger = match std::fs::read_to_string(&ledger_path) {
            Ok(text) => match serde_json::from_str::<Ledger>(&text) {
                Ok(l) => Some(l),
                Err(e) if force => {
                    eprintln!(
                        "warning: {} is not an exanet ledger ({e}); --force: every file in the way is backed up",
                        ledger_path.display()
                    );
                    None
                }
                Err(e) => {
                    return Err(usage(format!(
                    "{} is not an exanet ledger ({e}), so nothing in {} is known to be exanet's; \
                         nothing was changed. Remove the folder's contents, use another folder, or \
                         pass --force to back up every file in the way",
                    ledger_path.display(),
                    root.display()
                )))
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", ledger_path.display())),
        };
        if ledger.is_none() && root.is_dir() && !force {
            let foreign = foreign_entries(root, root)?;
            if !foreign.is_empty() {
                return Err(usage(format!(
                    "{} is not empty and no exanet command wrote it (no {LEDGER}): {}; nothing was \
                     changed. Use an empty or new folder, or pass --force to write into it (files in \
                     the way are moved to a backup folder inside it, never deleted)",
                    root.display(),
                    list(foreign.iter().map(|f| f.to_string()))
                )));
            }
        }
        if root.exists() && !root.is_dir() {
            return Err(usage(format!(
                "{} is a file, not a folder: give --out a folder",
                root.display()
            )));
        }
        std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
        Ok(OutDir {
            root: root.to_path_buf(),
            ledger: ledger.unwrap_or_default(),
            force,
            command: command.to_string(),
            backup: None,
            backed_up: Vec::new(),
        })
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute-or-relative path of `rel` in the folder.
    pub fn path(&self, rel: &str) -> PathBuf {
        path_in(&self.root, rel)
    }

    /// Every file exanet owns in the folder now: listed ones that exist and
    /// files matching a pattern. Sorted.
    pub fn owned(&self) -> Result<Vec<String>> {
        let mut out: BTreeSet<String> = self
            .ledger
            .files
            .keys()
            .chain(self.ledger.pending.keys())
            .filter(|r| self.path(r).is_file())
            .cloned()
            .collect();
        for p in &self.ledger.patterns {
            let dir = p.rsplit_once('/').map_or("", |(d, _)| d);
            let mut found = Vec::new();
            files_under(&self.root, &self.path(dir), &mut found)?;
            out.extend(found.into_iter().filter(|f| matches(p, f)));
        }
        Ok(out.into_iter().collect())
    }

    /// Files that processes launched by exanet write (`dir/prefix*suffix`)
    /// are exanet's from now on.
    pub fn own_pattern(&mut self, pattern: &str) {
        self.ledger.patterns.insert(pattern.to_string());
    }

    /// Is the file at `rel` in the way of a change to `new` (None: removal)?
    fn foreign(&self, rel: &str, new: Option<&[u8]>) -> Result<Option<Foreign>> {
        let p = self.path(rel);
        if p.is_dir() {
            return Ok(Some(Foreign::NotWritten));
        }
        let have = match std::fs::read(&p) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", p.display())),
        };
        if new == Some(have.as_slice()) || self.ledger.patterns.iter().any(|pt| matches(pt, rel)) {
            return Ok(None);
        }
        let sha = sha256_hex(&have);
        let listed = [self.ledger.files.get(rel), self.ledger.pending.get(rel)];
        Ok(if listed.iter().flatten().any(|s| **s == sha) {
            None
        } else if listed.iter().any(Option::is_some) {
            Some(Foreign::Edited)
        } else {
            Some(Foreign::NotWritten)
        })
    }

    /// Check a whole change before making any of it: `writes` are the files
    /// about to be written with their new bytes, `removes` those about to be
    /// deleted. A file in the way that is not exanet's is a conflict:
    /// without `force` nothing changes and the error lists every conflict;
    /// with `force` they are moved to the backup folder. Then the ledger is
    /// saved with the new hashes pending.
    pub fn prepare(&mut self, writes: &[(String, Vec<u8>)], removes: &[String]) -> Result<()> {
        let mut conflicts = Vec::new();
        for (rel, bytes) in writes {
            if let Some(why) = self.foreign(rel, Some(bytes))? {
                conflicts.push((rel.clone(), why));
            }
        }
        for rel in removes {
            if let Some(why) = self.foreign(rel, None)? {
                conflicts.push((rel.clone(), why));
            }
        }
        if !conflicts.is_empty() {
            if !self.force {
                let what = |w: Foreign| match w {
                    Foreign::NotWritten => "not written by exanet",
                    Foreign::Edited => "edited since exanet wrote it",
                };
                return Err(usage(format!(
                    "{}: {} refuses to overwrite or remove {} file(s) that are not its own: {}; \
                     nothing was changed. Move them away, or pass --force to move them into a \
                     backup folder inside {} and go on",
                    self.root.display(),
                    self.command,
                    conflicts.len(),
                    list(conflicts.iter().map(|(r, w)| format!("{r} ({})", what(*w)))),
                    self.root.display()
                )));
            }
            for (rel, _) in &conflicts {
                self.back_up(rel)?;
            }
        }
        self.ledger.written_by.insert(self.command.clone());
        for (rel, bytes) in writes {
            self.ledger.pending.insert(rel.clone(), sha256_hex(bytes));
        }
        self.save()
    }

    /// [`Self::prepare`] and write `writes` (changed files returned).
    pub fn write_all(&mut self, writes: &[(String, Vec<u8>)]) -> Result<Vec<String>> {
        self.prepare(writes, &[])?;
        self.write_each(writes)
    }

    /// Make the folder hold exactly `writes` of exanet's own files: write
    /// them and remove every other file exanet owns there (files that are
    /// not exanet's stay). Prepared as one change. Returns the changed and
    /// the removed files.
    pub fn replace_all(
        &mut self,
        writes: &[(String, Vec<u8>)],
    ) -> Result<(Vec<String>, Vec<String>)> {
        let keep: BTreeSet<&str> = writes.iter().map(|(r, _)| r.as_str()).collect();
        let stale: Vec<String> = self
            .owned()?
            .into_iter()
            .filter(|r| !keep.contains(r.as_str()))
            .collect();
        self.prepare(writes, &stale)?;
        for rel in &stale {
            self.remove(rel)?;
        }
        Ok((self.write_each(writes)?, stale))
    }

    fn write_each(&mut self, writes: &[(String, Vec<u8>)]) -> Result<Vec<String>> {
        let mut changed = Vec::new();
        for (rel, bytes) in writes {
            if self.write(rel, bytes)? {
                changed.push(rel.clone());
            }
        }
        Ok(changed)
    }

    /// Move `rel` into the backup folder (made on first use).
    fn back_up(&mut self, rel: &str) -> Result<()> {
        let dir = match &self.backup {
            Some(d) => d.clone(),
            None => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let base = format!("backup-{}", stamp(now));
                let mut dir = self.root.join(&base);
                let mut n = 2;
                while dir.exists() {
                    dir = self.root.join(format!("{base}-{n}"));
                    n += 1;
                }
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                self.backup = Some(dir.clone());
                dir
            }
        };
        let to = path_in(&dir, rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let from = self.path(rel);
        std::fs::rename(&from, &to)
            .with_context(|| format!("moving {} to {}", from.display(), to.display()))?;
        self.ledger.files.remove(rel);
        self.backed_up.push(rel.to_string());
        Ok(())
    }

    /// The backup folder, if `--force` moved anything.
    pub fn backup_dir(&self) -> Option<&Path> {
        self.backup.as_deref()
    }

    /// Write `bytes` to `rel` (a prepared write): to a temporary name beside
    /// it, then renamed into place. Unchanged content is not rewritten.
    /// Returns whether the file changed.
    pub fn write(&mut self, rel: &str, bytes: &[u8]) -> Result<bool> {
        let sha = sha256_hex(bytes);
        let path = self.path(rel);
        let changed = std::fs::read(&path).ok().as_deref() != Some(bytes);
        if changed {
            write_atomic(&path, bytes)?;
        }
        self.ledger.pending.remove(rel);
        self.ledger.files.insert(rel.to_string(), sha);
        Ok(changed)
    }

    /// Put the file at `from` (written elsewhere, e.g. a waveform) into the
    /// folder at `rel`, a prepared path.
    pub fn adopt(&mut self, from: &Path, rel: &str) -> Result<()> {
        let bytes = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
        let to = self.path(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::rename(from, &to)
            .or_else(|_| {
                write_atomic(&to, &bytes).map(|_| std::fs::remove_file(from).unwrap_or(()))
            })
            .with_context(|| format!("moving {} to {}", from.display(), to.display()))?;
        self.ledger.pending.remove(rel);
        self.ledger
            .files
            .insert(rel.to_string(), sha256_hex(&bytes));
        Ok(())
    }

    /// Remove `rel` (a prepared removal), and its folders left empty.
    pub fn remove(&mut self, rel: &str) -> Result<()> {
        let p = self.path(rel);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", p.display())),
        }
        self.ledger.files.remove(rel);
        self.ledger.pending.remove(rel);
        let mut dir = p.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            if d == self.root || std::fs::remove_dir(&d).is_err() {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
        Ok(())
    }

    /// A free name for a new file: `rel` itself if nothing is there,
    /// otherwise `stem-2.ext`, `stem-3.ext`, … (a file exanet owns with the
    /// same name counts as free: it is replaced).
    pub fn free_name(&self, rel: &str) -> Result<String> {
        if self.foreign(rel, None)?.is_none() {
            return Ok(rel.to_string());
        }
        let (stem, ext) = match rel.rsplit_once('.') {
            Some((s, e)) if !s.is_empty() && !e.contains('/') => (s, format!(".{e}")),
            _ => (rel, String::new()),
        };
        for n in 2.. {
            let cand = format!("{stem}-{n}{ext}");
            if !self.path(&cand).exists() {
                return Ok(cand);
            }
        }
        unreachable!("an unbounded range ends only by returning")
    }

    /// Save the ledger: after the last change, or at any point.
    pub fn save(&self) -> Result<()> {
        let mut json = serde_json::to_string_pretty(&self.ledger)?;
        json.push('\n');
        write_atomic(&self.root.join(LEDGER), json.as_bytes())
    }

    /// Finish: every pending write is done (or was dropped); save the ledger.
    pub fn commit(mut self) -> Result<Option<PathBuf>> {
        self.ledger.pending.clear();
        self.save()?;
        Ok(self.backup.take())
    }
}

/// A hidden staging folder inside an output folder, for work that is moved
/// into place only when complete; removed with everything left in it when
/// dropped (so a failed run leaves nothing half-written behind).
#[derive(Debug)]
pub struct Staging(PathBuf);

impl Staging {
    /// A new staging folder in `root` (created with it if missing).
    pub fn new(root: &Path) -> Result<Staging> {
        let p = root.join(format!(".exanet-staging-{}", std::process::id()));
        std::fs::create_dir_all(&p).with_context(|| format!("creating {}", p.display()))?;
        Ok(Staging(p))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Write `bytes` to `path` through a temporary file beside it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// The first [`LIST_MAX`] items, then how many more.
fn list(items: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = items.collect();
    let mut s = all
        .iter()
        .take(LIST_MAX)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if all.len() > LIST_MAX {
        s += &format!(" and {} more", all.len() - LIST_MAX);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(files: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        files
            .iter()
            .map(|(r, t)| (r.to_string(), t.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn stamps_are_utc_civil_dates() {
        assert_eq!(stamp(0), "19700101-000000");
        assert_eq!(stamp(951_782_400), "20000229-000000");
        assert_eq!(stamp(1_796_349_599), "20261204-015959");
    }

    #[test]
    fn patterns_match_one_folder_and_the_name_around_the_star() {
        assert!(matches("tasks/task-*.json", "tasks/task-0001.json"));
        assert!(!matches("tasks/task-*.json", "tasks/sub/task-0001.json"));
        assert!(!matches("tasks/task-*.json", "tasks/task-0001.json.tmp"));
        assert!(!matches("tasks/task-*.json", "task-0001.json"));
        assert!(matches("logs/*", "logs/task-3.out"));
        assert!(matches("plan.json", "plan.json"));
    }

    #[test]
    fn own_files_are_replaced_foreign_and_edited_ones_refused_or_backed_up() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("o");
        let mut o = OutDir::claim(&root, "exanet test", false).unwrap();
        let first = plan(&[("a/x.v", "one"), ("b.txt", "two")]);
        assert_eq!(o.write_all(&first).unwrap(), ["a/x.v", "b.txt"]);
        o.commit().unwrap();

        // Own, unchanged files: rewritten and removed without a word.
        let mut o = OutDir::claim(&root, "exanet test", false).unwrap();
        assert_eq!(o.owned().unwrap(), ["a/x.v", "b.txt"]);
        let (changed, removed) = o.replace_all(&plan(&[("a/x.v", "ONE")])).unwrap();
        assert_eq!(
            (changed, removed),
            (vec!["a/x.v".into()], vec!["b.txt".into()])
        );
        o.commit().unwrap();
        assert!(!root.join("b.txt").exists());

        // A user's file and an edited one are in the way: refused, untouched.
        std::fs::write(root.join("a/mine.v"), "mine").unwrap();
        std::fs::write(root.join("a/x.v"), "edited").unwrap();
        let mut o = OutDir::claim(&root, "exanet test", false).unwrap();
        let e = o
            .prepare(&plan(&[("a/x.v", "1"), ("a/mine.v", "2")]), &[])
            .unwrap_err();
        let msg = format!("{e}");
        assert!(
            msg.contains("a/x.v (edited since exanet wrote it)")
                && msg.contains("a/mine.v (not written by exanet)")
                && msg.contains("nothing was changed"),
            "{msg}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a/x.v")).unwrap(),
            "edited"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a/mine.v")).unwrap(),
            "mine"
        );

        // --force: both moved to the backup folder, then written.
        let mut o = OutDir::claim(&root, "exanet test", true).unwrap();
        o.write_all(&plan(&[("a/x.v", "1"), ("a/mine.v", "2")]))
            .unwrap();
        let backup = o.commit().unwrap().expect("a backup folder");
        assert_eq!(
            std::fs::read_to_string(backup.join("a/x.v")).unwrap(),
            "edited"
        );
        assert_eq!(
            std::fs::read_to_string(backup.join("a/mine.v")).unwrap(),
            "mine"
        );
        assert!(backup
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("backup-20"));
    }

    #[test]
    fn a_non_empty_folder_without_a_ledger_is_refused_but_nested_output_folders_are_not() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("o");
        // Only an exanet folder inside (e.g. out/cosim): fine.
        let mut inner = OutDir::claim(&root.join("cosim"), "exanet cosim", false).unwrap();
        inner.prepare(&[], &[]).unwrap();
        inner.commit().unwrap();
        OutDir::claim(&root, "exanet test", false).unwrap();
        std::fs::write(root.join("notes.txt"), "n").unwrap();
        let e = OutDir::claim(&root, "exanet test", false).unwrap_err();
        assert!(format!("{e}").contains("notes.txt"), "{e}");
        OutDir::claim(&root, "exanet test", true).unwrap();
    }

    #[test]
    fn a_write_cut_short_leaves_a_folder_the_next_run_accepts() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("o");
        let mut o = OutDir::claim(&root, "exanet test", false).unwrap();
        let p = plan(&[("x", "new")]);
        o.prepare(&p, &[]).unwrap();
        o.write("x", b"new").unwrap();
        drop(o); // killed before commit: x is pending in the ledger
        let mut o = OutDir::claim(&root, "exanet test", false).unwrap();
        o.prepare(&plan(&[("x", "newer")]), &[]).unwrap();
    }

    #[test]
    fn free_names_never_replace_a_foreign_file() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("o");
        let o = OutDir::claim(&root, "exanet test", false).unwrap();
        assert_eq!(o.free_name("w.vcd").unwrap(), "w.vcd");
        std::fs::write(root.join("w.vcd"), "x").unwrap();
        assert_eq!(o.free_name("w.vcd").unwrap(), "w-2.vcd");
    }
}
