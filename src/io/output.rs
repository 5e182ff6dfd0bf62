//! Temporary output files that must not outlive an interrupted run.
//!
//! Every file fmalign writes under a name a user asked for (the index, `map
//! -o`) is first written as `.NAME.tmp.PID` beside it and renamed when
//! complete ([`TempFile::commit`]). A [`TempFile`] removes its file when
//! dropped uncommitted (an error), and [`remove_on_signal`] makes SIGINT,
//! SIGTERM and SIGHUP remove every live one before the process ends with the
//! signal's default action, so an interrupted run leaves neither a partial
//! file under the final name nor a stray temporary file. [`write_atomically`]
//! is the whole sequence for a file written in one go; the distributed build
//! (`dist::index`), whose ranks write into one file between collectives,
//! uses [`TempFile`] and [`temp_path_for`] directly.
//!
//! A memory-mapped index cut short while in use (`cp new.fmi old.fmi` over
//! it) makes the next read of the lost pages raise SIGBUS;
//! [`exit_on_sigbus`] turns that into an error like any other: a message
//! naming the file, temporary files removed, exit status 1.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// Temporary files not yet renamed or removed. The lock is also held across
/// each rename, so that a signal arriving then sees either the temporary
/// file (and removes it) or the finished one (and leaves it).
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A temporary file, removed unless committed.
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
    done: bool,
}

impl TempFile {
    /// Registers `path` (about to be created) for removal.
    pub fn register(path: PathBuf) -> TempFile {
        live().push(path.clone());
        TempFile { path, done: false }
    }

    /// The temporary path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file to `to`; it is no longer removed on a signal.
    pub fn commit(mut self, to: &Path) -> io::Result<()> {
        let mut list = live();
        let r = std::fs::rename(&self.path, to);
        if r.is_ok() {
            forget(&mut list, &self.path);
            self.done = true;
        }
        r
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.done {
            let mut list = live();
            let _ = std::fs::remove_file(&self.path);
            forget(&mut list, &self.path);
        }
    }
}

/// Writes `out` through `.NAME.tmp.PID` in the same directory: `write`
/// fills the buffered file, which is then flushed, synced and renamed to
/// `out`. On an error or a signal the temporary file is removed. Returns
/// what `write` returned.
pub fn write_atomically<T>(
    out: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
) -> Result<T> {
    let tmp = TempFile::register(temp_path(out));
    let result = (|| {
        let file = File::create(tmp.path())?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let v = write(&mut w)?;
        w.flush()?;
        w.get_ref().sync_all()?;
        Ok(v)
    })();
    let v = result.map_err(|e| Error::io(out, e))?;
    tmp.commit(out).map_err(|e| Error::io(out, e))?;
    Ok(v)
}

/// Where a command writes its main output (`map -o`): stdout; a file that
/// is not a regular file (`/dev/null`, a FIFO, a terminal), written in
/// place; or a regular file, written as `.NAME.tmp.PID` beside it and
/// renamed by [`Output::finish`] (removed on an error or a signal).
pub struct Output {
    name: String,
    writer: Box<dyn Write + Send>,
    rename: Option<(TempFile, PathBuf)>,
}

impl Output {
    /// The output for `path`, or stdout for `None`.
    pub fn create(path: Option<&Path>) -> Result<Output> {
        let Some(path) = path else {
            return Ok(Output {
                name: "<stdout>".into(),
                writer: Box::new(io::stdout()),
                rename: None,
            });
        };
        let name = path.display().to_string();
        // Not a regular file (a pipe, `/dev/stdout`, a FIFO, a terminal,
        // `/dev/null`): written in place, opened by the name given, which
        // the kernel resolves as a shell's `>` does (`/dev/stdout` is a
        // link to `/proc/self/fd/1`, whose target `pipe:[N]` is no path).
        if written_in_place(path) {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            return Ok(Output {
                name,
                writer: Box::new(f),
                rename: None,
            });
        }
        let path = &follow_links(path);
        let tmp = TempFile::register(temp_path(path));
        // Errors name the file asked for, not the temporary one beside it.
        let f = File::create(tmp.path()).map_err(|e| Error::io(path, e))?;
        Ok(Output {
            name,
            writer: Box::new(f),
            rename: Some((tmp, path.to_owned())),
        })
    }

    /// The name messages use: the path, or `<stdout>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where to write (unbuffered).
    pub fn writer(&mut self) -> &mut (dyn Write + Send) {
        &mut *self.writer
    }

    /// Flushes, and gives a temporary file its final name. Dropped without
    /// this, the temporary file is removed.
    pub fn finish(mut self) -> Result<()> {
        self.writer.flush().map_err(|e| Error::io(&self.name, e))?;
        if let Some((tmp, path)) = self.rename {
            tmp.commit(&path).map_err(|e| Error::io(&path, e))?;
        }
        Ok(())
    }
}

/// Whether `path` exists and is not a regular file (a pipe, a FIFO, a
/// terminal, `/dev/null`, a directory; through links, so `/dev/stdout`
/// too): an output there is opened by its name and written in place, never
/// through a temporary file renamed over it.
pub fn written_in_place(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// Where writing to `path` lands: `path`, or the file a symbolic link there
/// points to (followed to its end; a link to nothing yet gives where it
/// points). Outputs are written beside their final name and renamed into
/// place, which would replace a link with a plain file and leave its target
/// as it was; writing to the target keeps the link, as `>` in a shell does.
/// A link to what is not a regular file (`/dev/stdout` into a pipe) is
/// left as it is: such outputs are opened by their name and written in
/// place.
pub fn follow_links(path: &Path) -> PathBuf {
    let is_link = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link(path) || written_in_place(path) {
        return path.to_owned();
    }
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    // A dangling link (the output is new): follow it by hand.
    let mut p = path.to_owned();
    for _ in 0..40 {
        match std::fs::read_link(&p) {
            Ok(t) if is_link(&p) => {
                p = p.parent().map_or(t.clone(), |dir| dir.join(&t));
            }
            _ => break,
        }
    }
    p
}

/// What a path names, to tell whether two names are one file.
#[derive(Debug, PartialEq, Eq)]
enum FileId {
    /// `-`: the standard stream.
    Stdio,
    /// A terminal, `/dev/null` or another device: any number of outputs
    /// may share it.
    Device,
    /// An existing file, pipe or directory, through links and hard links.
    Inode(u64, u64),
    /// What is not there yet: the absolute path it will have, links and
    /// the directory resolved.
    New(PathBuf),
}

fn file_id(path: &Path) -> FileId {
    if path == Path::new("-") {
        return FileId::Stdio;
    }
    match std::fs::metadata(path) {
        #[cfg(unix)]
        Ok(m) => {
            use std::os::unix::fs::{FileTypeExt, MetadataExt};
            let t = m.file_type();
            if t.is_char_device() || t.is_block_device() {
                FileId::Device
            } else {
                FileId::Inode(m.dev(), m.ino())
            }
        }
        #[cfg(not(unix))]
        Ok(_) => FileId::New(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())),
        Err(_) => {
            let p = follow_links(path);
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            match (std::fs::canonicalize(dir), p.file_name()) {
                (Ok(d), Some(name)) => FileId::New(d.join(name)),
                _ => FileId::New(p),
            }
        }
    }
}

/// Whether two paths name one file: the same path, or the same device and
/// inode (through a link or another spelling of the path). `-` (a standard
/// stream) is no file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    let x = file_id(a);
    matches!(x, FileId::Inode(..)) && x == file_id(b)
}

/// Refuses, before any work, an output that is one of the inputs or that
/// another output also names: through symbolic links, hard links and other
/// spellings of a path (the same device and inode), and for outputs not yet
/// there, the same directory and name. Each entry is the option that named
/// the file (`-o`, `--un`, `the reads`) and its path; `-` is stdout among
/// the outputs (two outputs cannot both be stdout) and stdin among the
/// inputs (never a file). Devices (`/dev/null`, a terminal) may be shared.
pub fn check_outputs(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<()> {
    let ins: Vec<FileId> = inputs
        .iter()
        .map(|(_, p)| match file_id(p) {
            FileId::Stdio | FileId::Device => FileId::Device,
            id => id,
        })
        .collect();
    let mut seen: Vec<(FileId, &str, &Path)> = Vec::new();
    for &(opt, out) in outputs {
        let id = file_id(out);
        if id == FileId::Device {
            continue;
        }
        if let Some(i) = ins.iter().position(|x| *x == id) {
            let (what, input) = inputs[i];
            return Err(Error::Usage(format!(
                "{opt} {}: this is {what} {}; writing there would destroy it",
                out.display(),
                input.display()
            )));
        }
        if let Some((_, other, path)) = seen.iter().find(|(x, _, _)| *x == id) {
            let name = |p: &Path| {
                if p == Path::new("-") {
                    "- (stdout)".to_owned()
                } else {
                    p.display().to_string()
                }
            };
            return Err(Error::Usage(format!(
                "{other} {} and {opt} {} are the same file; give each output a name of its own",
                name(path),
                name(out)
            )));
        }
        seen.push((id, opt, out));
    }
    Ok(())
}

/// Fails now, rather than after the work, when `out` cannot be created:
/// its directory is missing or not writable. Makes and removes the
/// temporary file the output will be written through.
pub fn check_writable(out: &Path) -> Result<()> {
    if written_in_place(out) {
        return Ok(());
    }
    let tmp = TempFile::register(temp_path(&follow_links(out)));
    File::create(tmp.path()).map_err(|e| Error::io(out, e))?;
    Ok(())
}

/// `.NAME.tmp.PID` beside `out`.
pub fn temp_path(out: &Path) -> PathBuf {
    temp_path_for(out, std::process::id())
}

/// `.NAME.tmp.PID` beside `out` for the process `pid` (the distributed
/// build: every rank writes into rank 0's temporary file).
pub fn temp_path_for(out: &Path, pid: u32) -> PathBuf {
    let name = out
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.with_file_name(format!(".{name}.tmp.{pid}"))
}

fn forget(list: &mut Vec<PathBuf>, path: &Path) {
    if let Some(i) = list.iter().position(|p| p == path) {
        list.swap_remove(i);
    }
}

/// The signals whose default action ends the process and that users or
/// batch schedulers send to end a job: interrupt, terminate, hang-up, the
/// user signals, an alarm and the CPU-time limit (SGE, Slurm and LSF send
/// SIGUSR1, SIGUSR2 or SIGXCPU ahead of SIGKILL). SIGQUIT is left alone:
/// it is asked for a core dump.
pub const ENDING_SIGNALS: [i32; 7] = {
    use signal_hook::consts::*;
    [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU]
};

/// On any of [`ENDING_SIGNALS`]: remove the live temporary files, then end
/// the process as the signal would have (exit status 128 + signal in a
/// shell). Called once, at the start of `main`.
pub fn remove_on_signal() -> io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new(ENDING_SIGNALS)?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let oom = crate::alloc::out_of_memory();
                // A thread whose allocation failed may hold the list's
                // lock (it was growing it): then wait a second at most.
                let list = if oom {
                    (0..100).find_map(|_| match LIVE.try_lock() {
                        Ok(l) => Some(l),
                        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
                        Err(std::sync::TryLockError::WouldBlock) => {
                            std::thread::sleep(std::time::Duration::from_millis(10));
                            None
                        }
                    })
                } else {
                    Some(live())
                };
                for p in list.iter().flat_map(|l| l.iter()) {
                    let _ = std::fs::remove_file(p);
                }
                if BUS_ERROR.load(Ordering::SeqCst) || oom {
                    // exit_on_sigbus, or the allocator out of memory,
                    // raised this signal after its message.
                    std::process::exit(1);
                }
                // The default action of these signals ends the process.
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

/// Set by the SIGBUS handler: the signal thread then exits with status 1.
static BUS_ERROR: AtomicBool = AtomicBool::new(false);
/// The SIGBUS message (leaked, never freed: a process maps a few indexes).
static BUS_MESSAGE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static BUS_MESSAGE_LEN: AtomicUsize = AtomicUsize::new(0);

/// Makes SIGBUS end the process like an error: `fmalign: error: PATH: ...`
/// on stderr, the live temporary files removed (by the thread of
/// [`remove_on_signal`]), exit status 1. `path` is the file just mapped,
/// named in the message. Without [`remove_on_signal`] running, the process
/// ends as by SIGTERM after the message.
pub fn exit_on_sigbus(path: &Path) {
    let msg = format!(
        "fmalign: error: {}: the index file changed or was truncated while in use (bus error reading its memory map); run again once it is complete\n",
        path.display()
    )
    .into_bytes()
    .leak();
    BUS_MESSAGE_LEN.store(0, Ordering::SeqCst);
    BUS_MESSAGE.store(msg.as_mut_ptr(), Ordering::SeqCst);
    BUS_MESSAGE_LEN.store(msg.len(), Ordering::SeqCst);
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // SAFETY: a zeroed sigaction is valid; the handler only calls
        // async-signal-safe functions (write, raise, pause) and atomics.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

/// The SIGBUS handler: the first faulting thread writes the message and
/// raises SIGTERM for the signal thread to clean up and exit; every
/// faulting thread then waits there (returning would fault again).
extern "C" fn on_sigbus(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    if !BUS_ERROR.swap(true, Ordering::SeqCst) {
        let len = BUS_MESSAGE_LEN.load(Ordering::SeqCst);
        let msg = BUS_MESSAGE.load(Ordering::SeqCst);
        // SAFETY: write(2) of the leaked message, which is never freed.
        unsafe {
            if !msg.is_null() {
                libc::write(libc::STDERR_FILENO, msg as *const libc::c_void, len);
            }
            libc::raise(libc::SIGTERM);
        }
    }
    loop {
        // SAFETY: pause(2) is async-signal-safe.
        unsafe { libc::pause() };
    }
}
