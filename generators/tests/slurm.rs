//! `exanet sweep --slurm` under a real Slurm (issue 19 item 3): a
//! single-node cluster on localhost (a generated `slurm.conf` and munge key,
//! `munged`, `slurmctld` and `slurmd` started by this test, in a temporary
//! folder, on free ports), the `sweep.sbatch` that `exanet sweep --slurm`
//! wrote submitted with `sbatch`, every array task checked COMPLETED with
//! exit 0, `exanet sweep collect` run on its folder and the results compared
//! with a local run of the same sweep, file by file. The daemons are stopped
//! by PID at the end (also when the test fails) and the test checks none is
//! left.
//!
//! Needs Debian's `slurm-wlm` and `munge` (`scripts/install-tools.sh`
//! installs them) and root (slurmd runs each job as its user). Without them
//! it says why and passes, except under CI (`CI` set), where it fails.

mod common;

use common::{repo, EXE};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NODE: &str = "exanet-test";
const TOOLS: [&str; 7] = [
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "squeue",
    "sinfo",
    "scontrol",
];

/// `name` on PATH or in an sbin folder (not on a non-root PATH).
fn tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .map(PathBuf::from)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Why this machine cannot run the test, if it cannot.
fn missing() -> Option<String> {
    let absent: Vec<&str> = TOOLS
        .iter()
        .copied()
        .filter(|t| tool(t).is_none())
        .collect();
    if !absent.is_empty() {
        return Some(format!(
            "{} not installed (Debian packages slurm-wlm and munge; scripts/install-tools.sh installs them)",
            absent.join(", ")
        ));
    }
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("not root: slurmd must be root to run jobs as their user".into());
    }
    None
}

/// The daemons this test started; stopped by PID on drop.
struct Daemons {
    started: Vec<(&'static str, Child)>,
    dir: PathBuf,
}

impl Daemons {
    fn start(&mut self, name: &'static str, args: &[&str]) {
        let log = std::fs::File::create(self.dir.join(format!("{name}.out"))).unwrap();
        let child = Command::new(tool(name).unwrap())
            .args(args)
            .env("SLURM_CONF", self.dir.join("slurm.conf"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        self.started.push((name, child));
    }

    /// SIGTERM each (slurmd, then slurmctld, then munged), wait up to 10 s,
    /// then SIGKILL what is left. Returns the daemons that needed SIGKILL.
    fn stop(&mut self) -> Vec<&'static str> {
        let mut killed = Vec::new();
        while let Some((name, mut child)) = self.started.pop() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let t = Instant::now();
            loop {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if t.elapsed() > Duration::from_secs(10) {
                    let _ = child.kill();
                    let _ = child.wait();
                    killed.push(name);
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        killed
    }

    /// The daemons' own output and logs, for a failure message.
    fn logs(&self) -> String {
        let mut s = String::new();
        for f in [
            "munged.out",
            "slurmctld.out",
            "slurmd.out",
            "slurmctld.log",
            "slurmd.log",
        ] {
            if let Ok(t) = std::fs::read_to_string(self.dir.join(f)) {
                let tail: Vec<&str> = t.lines().rev().take(15).collect();
                s.push_str(&format!("\n--- {f} (last lines)\n"));
                for l in tail.iter().rev() {
                    s.push_str(l);
                    s.push('\n');
                }
            }
        }
        s
    }
}

impl Drop for Daemons {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// A Slurm client command with this cluster's config; its stdout.
fn client(dir: &Path, name: &str, args: &[&str]) -> Result<String, String> {
    let o = Command::new(tool(name).unwrap())
        .args(args)
        .env("SLURM_CONF", dir.join("slurm.conf"))
        .output()
        .map_err(|e| format!("{name}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{name} {args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Poll `f` every 200 ms until it returns `Some`, for at most `limit`.
fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    None
}

fn slurm_conf(dir: &Path, ctld_port: u16, d_port: u16, cpus: u32) -> String {
    let d = dir.display();
    let user = "root";
    format!(
        "# single-node Slurm on localhost for exanet's tests (generated)\n\
         ClusterName=exanettest\n\
         SlurmctldHost={host}(127.0.0.1)\n\
         SlurmUser={user}\nSlurmdUser=root\n\
         SlurmctldPort={ctld_port}\nSlurmdPort={d_port}\n\
         AuthType=auth/munge\nAuthInfo=socket={d}/munge.socket\nCryptoType=crypto/munge\n\
         StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
         SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
         ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
         JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
         JobCompType=jobcomp/none\nMpiDefault=none\nSwitchType=switch/none\n\
         SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\n\
         SchedulerType=sched/backfill\nReturnToService=2\n\
         NodeName={NODE} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=4096 State=UNKNOWN\n\
         PartitionName=exanet Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
        host = hostname(),
    )
}

/// Processes whose command line names `dir` (the daemons carry it in their
/// arguments).
fn processes_in(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let mut cmd = Vec::new();
        if let Ok(mut f) = std::fs::File::open(e.path().join("cmdline")) {
            let _ = f.read_to_end(&mut cmd);
        }
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(&needle) {
            out.push(format!("{name}: {cmd}"));
        }
    }
    out
}

fn exanet(args: &[&str], cwd: &Path) -> String {
    let o = Command::new(EXE)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "exanet {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn sbatch_runs_the_sweep_array_and_collect_matches_a_local_run() {
    if let Some(why) = missing() {
        if std::env::var_os("CI").is_some() {
            panic!("the real-Slurm test cannot run in CI: {why}");
        }
        eprintln!("SKIPPED sbatch_runs_the_sweep_array_and_collect_matches_a_local_run: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    for d in ["state", "spool"] {
        std::fs::create_dir(dir.join(d)).unwrap();
    }
    // munge: a fresh random key, readable by its owner only
    let mut key = vec![0u8; 1024];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut key)
        .unwrap();
    let key_file = dir.join("munge.key");
    std::fs::write(&key_file, &key).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    std::fs::write(
        dir.join("slurm.conf"),
        slurm_conf(&dir, free_port(), free_port(), cpus),
    )
    .unwrap();
    let mut daemons = Daemons {
        started: Vec::new(),
        dir: dir.clone(),
    };
    let p = |f: &str| dir.join(f).display().to_string();
    daemons.start(
        "munged",
        &[
            "--foreground",
            "--force",
            &format!("--key-file={}", p("munge.key")),
            &format!("--socket={}", p("munge.socket")),
            &format!("--pid-file={}", p("munged.pid")),
            &format!("--log-file={}", p("munged.log")),
            &format!("--seed-file={}", p("munged.seed")),
        ],
    );
    if wait_for(Duration::from_secs(10), || {
        dir.join("munge.socket").exists().then_some(())
    })
    .is_none()
    {
        panic!("munged did not open its socket:{}", daemons.logs());
    }
    let conf = p("slurm.conf");
    daemons.start("slurmctld", &["-D", "-f", &conf]);
    daemons.start("slurmd", &["-D", "-f", &conf, "-N", NODE]);
    let idle = wait_for(Duration::from_secs(30), || {
        client(&dir, "sinfo", &["-h", "-N", "-o", "%T"])
            .ok()
            .filter(|s| s.trim() == "idle")
    });
    if idle.is_none() {
        panic!("the node did not come up idle in 30 s:{}", daemons.logs());
    }

    // a small sweep: 2 series x 2 rates on the 16-node config
    let sweep = dir.join("small.toml");
    let base = repo()
        .join("configs/small-4x2x2.toml")
        .canonicalize()
        .unwrap();
    std::fs::write(
        &sweep,
        format!(
            "name = \"slurm-check\"\nbase = {:?}\n[set]\n\"sim.warmup\" = 100\n\"sim.measure\" = 400\n\
             \"sim.drain\" = 5000\n[vary]\n\"router.buffer_flits\" = [32, 64]\n\"traffic.rate\" = [0.05, 0.2]\n\
             [slurm]\ntime = \"00:05:00\"\nmem = \"500M\"\n",
            base.display().to_string()
        ),
    )
    .unwrap();
    let s = sweep.display().to_string();
    exanet(&["sweep", &s, "--jobs", "1", "--out", "local"], &dir);
    let said = exanet(&["sweep", &s, "--slurm", "--out", "cluster"], &dir);
    assert!(said.contains("sbatch"), "{said}");
    let script = dir.join("cluster/sweep.sbatch").display().to_string();
    let submitted = client(&dir, "sbatch", &["--parsable", &script])
        .unwrap_or_else(|e| panic!("{e}{}", daemons.logs()));
    let job = submitted.trim().split(';').next().unwrap().to_string();
    assert!(job.bytes().all(|b| b.is_ascii_digit()), "job id {job:?}");
    let done = wait_for(Duration::from_secs(90), || {
        client(&dir, "squeue", &["-h", "-j", &job])
            .ok()
            .filter(|q| q.trim().is_empty())
    });
    if done.is_none() {
        let q = client(&dir, "squeue", &["-j", &job]).unwrap_or_else(|e| e);
        panic!(
            "job {job} still queued or running after 90 s:\n{q}{}",
            daemons.logs()
        );
    }
    // every array task completed with exit 0
    let shown = client(&dir, "scontrol", &["-o", "show", "job", &job]).unwrap();
    let tasks: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("ArrayTaskId="))
        .collect();
    assert_eq!(tasks.len(), 4, "{shown}");
    for t in &tasks {
        assert!(
            t.contains("JobState=COMPLETED") && t.contains("ExitCode=0:0"),
            "{t}\nlogs: {:?}{}",
            std::fs::read_dir(dir.join("cluster/logs"))
                .unwrap()
                .flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect::<Vec<_>>(),
            daemons.logs()
        );
    }
    for i in 0..4 {
        let log = std::fs::read_to_string(dir.join(format!("cluster/logs/task-{i}.out"))).unwrap();
        assert!(log.contains(&format!("task {i} [")), "task {i} log: {log}");
    }
    exanet(&["sweep", "collect", "cluster"], &dir);
    for f in [
        "results.csv",
        "results.json",
        "latency.svg",
        "throughput.svg",
        "saturation.svg",
    ] {
        let local = std::fs::read_to_string(dir.join("local").join(f)).unwrap();
        let cluster = std::fs::read_to_string(dir.join("cluster").join(f)).unwrap();
        assert_eq!(
            local, cluster,
            "{f}: the Slurm run's collect differs from the local run"
        );
    }

    let killed = daemons.stop();
    assert!(killed.is_empty(), "needed SIGKILL: {killed:?}");
    let left = processes_in(&dir);
    assert!(left.is_empty(), "left running: {left:?}");
}
