//! exanet-gen: the config, its elaboration, Verilog/XDC/TCL emission, the
//! Verilator and Yosys drivers, and the library behind the `exanet` CLI.
//!
//! Flow: [`config::load`] (TOML file over the built-in default, `-P`
//! overrides) → [`config::Loaded::elaborate`] / [`params::elaborate`] (every
//! rule, every derived value) → [`generate::generate`] (RTL, XDC, TCL,
//! manifest) → [`lint`], [`synth`] on the generated folder; [`cosim`] runs a
//! block's RTL against its golden model. Library functions return `Result`;
//! only the binary prints and exits.

pub mod allreduce;
pub mod board;
pub mod config;
pub mod cosim;
pub mod error;
pub mod fusesoc;
pub mod generate;
pub mod jobs;
pub mod lint;
pub mod logic_depth;
pub mod mutate;
pub mod node_flow;
pub mod outdir;
pub mod params;
pub mod plot;
pub mod plot_studies;
pub mod regmap;
pub mod reproduce;
pub mod results;
pub mod simulate;
pub mod sweep;
pub mod synth;
pub mod tools;
pub mod vivado_report;
