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
        let path = &follow_links(path);
        if path.exists() && !path.is_file() {
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

/// Where writing to `path` lands: `path`, or the file a symbolic link there
/// points to (followed to its end; a link to nothing yet gives where it
/// points). Outputs are written beside their final name and renamed into
/// place, which would replace a link with a plain file and leave its target
/// as it was; writing to the target keeps the link, as `>` in a shell does.
pub fn follow_links(path: &Path) -> PathBuf {
    let is_link = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link(path) {
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

/// On SIGINT, SIGTERM or SIGHUP: remove the live temporary files, then end
/// the process as the signal would have (exit status 128 + signal in a
/// shell). Called once, at the start of `main`.
pub fn remove_on_signal() -> io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let list = live();
                for p in list.iter() {
                    let _ = std::fs::remove_file(p);
                }
                if BUS_ERROR.load(Ordering::SeqCst) {
                    // exit_on_sigbus raised this signal after its message.
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
