//! Run-time settings: the values behind `SET`, `SHOW` and `RESET`.
//!
//! PostgreSQL calls these GUCs. heapdb keeps the handful that change what it
//! does (memory for sorts and hashes, ring sizes, commit durability, I/O
//! concurrency for prefetching, statistics target, planner switches) in one
//! typed struct, [`Settings`], so the executor reads `settings.work_mem_kb`
//! instead of looking a name up per use. The name-based face that SQL needs
//! (`SET work_mem = '64MB'`, `SHOW ALL`) is the static table [`DEFS`], one
//! [`Def`] per setting with its unit, bounds and accessor functions.
//!
//! This module lives at the crate's top rather than under `commands/` because
//! every layer reads settings, while only the SET/SHOW commands write them.
//!
//! Input and output follow PostgreSQL exactly, since users compare the two:
//! - memory settings take an integer or decimal with an optional unit (`B`,
//!   `kB`, `MB`, `GB`, `TB`, case-sensitive), a bare number being in the
//!   setting's base unit; they print in the largest unit that divides the
//!   value exactly (`4MB`, `1536kB`);
//! - time settings take `us`, `ms`, `s`, `min`, `h`, `d` and print likewise
//!   (`5min`, `90s`);
//! - errors use PostgreSQL's wording and SQLSTATEs: 42704 for an unknown
//!   name, 22023 for a bad value, 55P02 refusals for settings that
//!   are fixed once the database is open.
//!
//! Invariant: a [`Settings`] value always holds valid values; `set` checks
//! the whole input before changing anything.

use std::sync::Arc;

use crate::error::{Error, Result, SqlState};

mod style;
pub use style::{find_zone_file, DateFormat, DateOrder, DateStyle, IntervalStyle};

/// Every setting heapdb has, typed. Memory sizes are in kB, ring sizes in kB,
/// times in seconds, as PostgreSQL's base units.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Memory a sort or hash table may use before spilling to disk, in kB.
    pub work_mem_kb: i64,
    /// Memory for maintenance operations (VACUUM's dead-tuple list), in kB.
    pub maintenance_work_mem_kb: i64,
    /// A hash table (hash aggregation, a hash join's build side) may use
    /// this multiple of `work_mem` before it spills.
    pub hash_mem_multiplier: f64,
    /// Number of 8 KiB buffers in the pool; fixed once the database is open.
    pub shared_buffers: i64,
    /// PostgreSQL's ring rule: every sequential scan of a relation over a
    /// quarter of the pool uses the bulk-read ring (off: only one that does
    /// not fit in the pool's free and cold buffers).
    pub bulkread_quarter_rule: bool,
    /// Size of the bulk-read ring used by large sequential scans, in kB.
    pub bulkread_ring_kb: i64,
    /// The packed column cache's memory bound, in kB; 0 turns it off
    /// (`access::packed_cache`; process-wide: a scan sets it from its
    /// session's value).
    pub packed_cache_kb: i64,
    /// Size of the bulk-write ring used by COPY and INSERT ... SELECT, in kB.
    pub bulkwrite_ring_kb: i64,
    /// Size of the ring VACUUM uses, in kB.
    pub vacuum_ring_kb: i64,
    /// `on`, `off`, `local`, `remote_write` or `remote_apply`; everything but
    /// `off` waits for the commit record's flush.
    pub synchronous_commit: SyncCommit,
    /// Prefetch distance (blocks) for ordinary scans.
    pub effective_io_concurrency: i64,
    /// Prefetch distance (blocks) for VACUUM and ANALYZE.
    pub maintenance_io_concurrency: i64,
    /// Statistics target: ANALYZE samples 300 times this many rows.
    pub default_statistics_target: i64,
    /// Whether the planner may use hash joins.
    pub enable_hashjoin: bool,
    /// Whether the planner may use hash aggregation.
    pub enable_hashagg: bool,
    /// Whether aggregates may take all-visible pages from their page
    /// summaries instead of reading them (`access::sumfork`).
    pub enable_page_summaries: bool,
    /// Explicit inner JOINs are flattened into their FROM list while it
    /// has at most this many items (`join_collapse_limit`).
    pub join_collapse_limit: i64,
    /// Subqueries' FROM lists are merged into their parent's while it has
    /// at most this many items (`from_collapse_limit`).
    pub from_collapse_limit: i64,
    /// `geqo`: FROM lists of `geqo_threshold` items or more are ordered by
    /// a greedy search instead of an exhaustive one.
    pub geqo: bool,
    /// `geqo_threshold`.
    pub geqo_threshold: i64,
    /// `extra_float_digits`: 1 to 3 print floats in their shortest exact
    /// form, 0 and below with `15 + n` (`6 + n` for real) significant digits.
    pub extra_float_digits: i64,
    /// Whether the planner may use sequential scans (else they cost
    /// PostgreSQL's `disable_cost` extra).
    pub enable_seqscan: bool,
    /// Whether the planner may use index scans (and index-only scans).
    pub enable_indexscan: bool,
    /// Whether the planner may use index-only scans.
    pub enable_indexonlyscan: bool,
    /// Accepted as PostgreSQL's; heapdb has no bitmap scans.
    pub enable_bitmapscan: bool,
    /// Worker threads a parallel scan may add beside the leader.
    pub max_parallel_workers_per_gather: i64,
    /// Worker threads VACUUM's heap pass may add beside the leader (at most
    /// one participant per core; PostgreSQL uses them for indexes only).
    pub max_parallel_maintenance_workers: i64,
    /// Tables of at least this many pages may be scanned in parallel.
    pub min_parallel_table_scan_size: i64,
    /// WAL volume that triggers a checkpoint, in MB; fixed while open.
    pub max_wal_size_mb: i64,
    /// Time between automatic checkpoints, in seconds; fixed while open.
    pub checkpoint_timeout_s: i64,
    /// Full-page images in the WAL are compressed (PostgreSQL's
    /// `wal_compression = lz4`; heapdb's row-delta form for heap pages of
    /// equal-width rows, LZ4 for the others); fixed while open.
    pub wal_compression: bool,
    /// The buffer pool asks the kernel for transparent huge pages (2 MB
    /// pages: a scan of a cached table then takes ~1/512 of the TLB misses);
    /// fixed while open.
    pub huge_pages: bool,
    /// `DateStyle`: how dates are written and read.
    pub datestyle: DateStyle,
    /// `IntervalStyle`: how intervals are written.
    pub intervalstyle: IntervalStyle,
    /// `TimeZone`, canonical (kept and shown; heapdb works in UTC).
    pub timezone: Arc<str>,
    /// `enable_async_append`.
    pub enable_async_append: bool,
    /// `enable_gathermerge`.
    pub enable_gathermerge: bool,
    /// `enable_incremental_sort`.
    pub enable_incremental_sort: bool,
    /// `enable_material`.
    pub enable_material: bool,
    /// `enable_memoize`.
    pub enable_memoize: bool,
    /// `enable_mergejoin`.
    pub enable_mergejoin: bool,
    /// `enable_nestloop`.
    pub enable_nestloop: bool,
    /// `enable_parallel_append`.
    pub enable_parallel_append: bool,
    /// `enable_parallel_hash`.
    pub enable_parallel_hash: bool,
    /// `enable_partition_pruning`.
    pub enable_partition_pruning: bool,
    /// `enable_partitionwise_aggregate`.
    pub enable_partitionwise_aggregate: bool,
    /// `enable_partitionwise_join`.
    pub enable_partitionwise_join: bool,
    /// `enable_sort`.
    pub enable_sort: bool,
    /// `enable_tidscan`.
    pub enable_tidscan: bool,
    /// `jit`.
    pub jit: bool,
    /// `parallel_leader_participation`.
    pub parallel_leader_participation: bool,
    /// `cpu_index_tuple_cost`.
    pub cpu_index_tuple_cost: f64,
    /// `cpu_operator_cost`.
    pub cpu_operator_cost: f64,
    /// `cpu_tuple_cost`.
    pub cpu_tuple_cost: f64,
    /// `jit_above_cost`.
    pub jit_above_cost: f64,
    /// `jit_inline_above_cost`.
    pub jit_inline_above_cost: f64,
    /// `jit_optimize_above_cost`.
    pub jit_optimize_above_cost: f64,
    /// `parallel_setup_cost`.
    pub parallel_setup_cost: f64,
    /// `parallel_tuple_cost`.
    pub parallel_tuple_cost: f64,
    /// `random_page_cost`.
    pub random_page_cost: f64,
    /// `seq_page_cost`.
    pub seq_page_cost: f64,
    /// `effective_cache_size`, in 8 KiB blocks.
    pub effective_cache_size: i64,
    /// `min_parallel_index_scan_size`, in 8 KiB blocks.
    pub min_parallel_index_scan_size: i64,
    /// `force_parallel_mode`, as an index into `off`, `on`, `regress`.
    pub force_parallel_mode: u8,
    /// `client_min_messages`: the least severe message level sent to the
    /// client, as an index into [`MESSAGE_LEVELS`].
    pub client_min_messages: u8,
    /// `bytea_output`: an index into [`BYTEA_OUTPUTS`] (`hex` or `escape`).
    pub bytea_output: u8,
    /// `default_transaction_isolation`: an index into [`ISOLATION_LEVELS`].
    pub default_transaction_isolation: u8,
    /// `default_transaction_read_only`: new transactions are READ ONLY.
    pub default_transaction_read_only: bool,
    /// `default_transaction_deferrable`: new transactions are DEFERRABLE.
    pub default_transaction_deferrable: bool,
    /// `standard_conforming_strings`: `'...'` takes backslashes literally
    /// (off: they escape, as in `E'...'`, and `U&'...'` is refused).
    pub standard_conforming_strings: bool,
    /// `escape_string_warning`: with `standard_conforming_strings` off, a
    /// backslash in a `'...'` literal draws a WARNING.
    pub escape_string_warning: bool,
}

/// `bytea_output`'s values, as PostgreSQL names them.
pub const BYTEA_OUTPUTS: [&str; 2] = ["escape", "hex"];

/// `default_transaction_isolation`'s values, as PostgreSQL names them.
pub const ISOLATION_LEVELS: [&str; 4] = [
    "serializable",
    "repeatable read",
    "read committed",
    "read uncommitted",
];

/// Message levels from least to most severe, as `client_min_messages`
/// names them (`INFO` is always sent, so it is not among them).
pub const MESSAGE_LEVELS: [&str; 9] = [
    "debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error",
];

impl Settings {
    /// Whether a message of `severity` (`NOTICE`, `WARNING`, ...) reaches
    /// the client: at least `client_min_messages`, or `INFO`.
    pub fn sends_to_client(&self, severity: &str) -> bool {
        if severity.eq_ignore_ascii_case("info") {
            return true;
        }
        let rank = MESSAGE_LEVELS
            .iter()
            .position(|l| l.eq_ignore_ascii_case(severity))
            .unwrap_or(MESSAGE_LEVELS.len());
        rank >= usize::from(self.client_min_messages)
    }
}

/// The values of `synchronous_commit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncCommit {
    /// Commit returns before the commit record is flushed.
    Off,
    /// Commit waits for the local flush (all the other values behave so in
    /// heapdb, which has no replicas).
    On,
    /// PostgreSQL's `local`.
    Local,
    /// PostgreSQL's `remote_write`.
    RemoteWrite,
    /// PostgreSQL's `remote_apply`.
    RemoteApply,
}

impl SyncCommit {
    const NAMES: [(&'static str, SyncCommit); 5] = [
        ("local", SyncCommit::Local),
        ("remote_write", SyncCommit::RemoteWrite),
        ("remote_apply", SyncCommit::RemoteApply),
        ("on", SyncCommit::On),
        ("off", SyncCommit::Off),
    ];

    /// True when a commit must wait for its WAL flush.
    pub fn waits_for_flush(self) -> bool {
        self != SyncCommit::Off
    }

    fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, v)| *v == self)
            .map(|(n, _)| *n)
            .expect("every SyncCommit value is in NAMES")
    }
}

/// `packed_cache_size`'s default, kB: 1 GiB. A scan answers a block the
/// cache holds without reading its page (docs/performance.md), so once
/// built the cache makes every scan of its columns cheaper.
pub const PACKED_CACHE_DEFAULT_KB: i64 = 1 << 20;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            work_mem_kb: 4 * 1024,
            maintenance_work_mem_kb: 64 * 1024,
            hash_mem_multiplier: 2.0,
            shared_buffers: 16384,
            bulkread_quarter_rule: false,
            bulkread_ring_kb: 256,
            packed_cache_kb: PACKED_CACHE_DEFAULT_KB,
            bulkwrite_ring_kb: 16 * 1024,
            vacuum_ring_kb: 256,
            synchronous_commit: SyncCommit::On,
            effective_io_concurrency: 1,
            maintenance_io_concurrency: 10,
            default_statistics_target: 100,
            enable_hashjoin: true,
            enable_hashagg: true,
            enable_page_summaries: true,
            join_collapse_limit: 8,
            from_collapse_limit: 8,
            geqo: true,
            geqo_threshold: 12,
            extra_float_digits: 1,
            bytea_output: 1,
            default_transaction_isolation: 2,
            default_transaction_read_only: false,
            default_transaction_deferrable: false,
            standard_conforming_strings: true,
            escape_string_warning: true,
            enable_seqscan: true,
            enable_indexscan: true,
            enable_indexonlyscan: true,
            enable_bitmapscan: true,
            max_parallel_workers_per_gather: 2,
            max_parallel_maintenance_workers: 2,
            min_parallel_table_scan_size: 1024,
            max_wal_size_mb: 1024,
            checkpoint_timeout_s: 300,
            wal_compression: true,
            huge_pages: true,
            datestyle: DateStyle::default(),
            intervalstyle: IntervalStyle::default(),
            timezone: style::default_time_zone(),
            enable_async_append: true,
            enable_gathermerge: true,
            enable_incremental_sort: true,
            enable_material: true,
            enable_memoize: true,
            enable_mergejoin: true,
            enable_nestloop: true,
            enable_parallel_append: true,
            enable_parallel_hash: true,
            enable_partition_pruning: true,
            enable_partitionwise_aggregate: false,
            enable_partitionwise_join: false,
            enable_sort: true,
            enable_tidscan: true,
            jit: true,
            parallel_leader_participation: true,
            cpu_index_tuple_cost: 0.005,
            cpu_operator_cost: 0.0025,
            cpu_tuple_cost: 0.01,
            jit_above_cost: 100000.0,
            jit_inline_above_cost: 500000.0,
            jit_optimize_above_cost: 500000.0,
            parallel_setup_cost: 1000.0,
            parallel_tuple_cost: 0.1,
            random_page_cost: 4.0,
            seq_page_cost: 1.0,
            effective_cache_size: 524288,
            min_parallel_index_scan_size: 64,
            force_parallel_mode: 0,
            client_min_messages: 6,
        }
    }
}

/// When a setting may be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Any session, any time (`SET`).
    User,
    /// Only when the database is opened (PostgreSQL's "postmaster" settings).
    Open,
    /// Only through the database's configuration, not per session
    /// (PostgreSQL's "sighup" settings).
    Database,
    /// Never: the value only reports something (`server_version`).
    Internal,
}

/// The unit of an integer setting's base value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A plain number.
    None,
    /// Kilobytes.
    Kb,
    /// Megabytes.
    Mb,
    /// 8 KiB blocks (`shared_buffers`).
    Blocks,
    /// Seconds.
    Seconds,
}

/// The shape and bounds of a setting's value.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// An integer in `min..=max` of `unit`.
    Int {
        /// Smallest valid value.
        min: i64,
        /// Largest valid value.
        max: i64,
        /// Unit of the stored value.
        unit: Unit,
    },
    /// A floating-point number in `min..=max`.
    Real {
        /// Smallest valid value.
        min: f64,
        /// Largest valid value.
        max: f64,
    },
    /// `on`/`off` and PostgreSQL's other Boolean spellings.
    Bool,
    /// `synchronous_commit`'s words.
    SyncCommit,
    /// A read-only text value.
    Text,
    /// `DateStyle`'s list of key words.
    DateStyle,
    /// `IntervalStyle`'s words.
    IntervalStyle,
    /// A time zone name.
    TimeZone,
    /// One of these words (any case), stored as its index.
    Enum(&'static [&'static str]),
}

/// The stored, typed value of one setting.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    /// An integer setting's value in its base unit.
    Int(i64),
    /// A floating-point setting.
    Real(f64),
    /// A Boolean setting.
    Bool(bool),
    /// `synchronous_commit`.
    SyncCommit(SyncCommit),
    /// A text value (read-only, or a time zone).
    Text(String),
    /// `DateStyle`.
    DateStyle(DateStyle),
    /// `IntervalStyle`.
    IntervalStyle(IntervalStyle),
    /// An index into the words of a [`Kind::Enum`].
    Enum(u8),
}

/// One setting: its name, kind, when it may change, a one-line description
/// (PostgreSQL's where it has the setting) and its accessors.
pub struct Def {
    /// The name as PostgreSQL spells it (`work_mem`, `TimeZone`); SET and
    /// SHOW take it in any case.
    pub name: &'static str,
    /// Value shape and bounds.
    pub kind: Kind,
    /// When it may be changed.
    pub context: Context,
    /// `SHOW ALL`'s description column.
    pub description: &'static str,
    get: fn(&Settings) -> SettingValue,
    put: fn(&mut Settings, SettingValue),
}

macro_rules! int_def {
    ($name:literal, $field:ident, $min:expr, $max:expr, $unit:ident, $ctx:ident, $desc:literal) => {
        Def {
            name: $name,
            kind: Kind::Int {
                min: $min,
                max: $max,
                unit: Unit::$unit,
            },
            context: Context::$ctx,
            description: $desc,
            get: |s| SettingValue::Int(s.$field),
            put: |s, v| {
                if let SettingValue::Int(i) = v {
                    s.$field = i
                }
            },
        }
    };
}

macro_rules! bool_def {
    ($name:literal, $field:ident, $desc:literal) => {
        Def {
            name: $name,
            kind: Kind::Bool,
            context: Context::User,
            description: $desc,
            get: |s| SettingValue::Bool(s.$field),
            put: |s, v| {
                if let SettingValue::Bool(b) = v {
                    s.$field = b
                }
            },
        }
    };
}

macro_rules! real_def {
    ($name:literal, $field:ident, $min:expr, $max:expr, $desc:literal) => {
        Def {
            name: $name,
            kind: Kind::Real {
                min: $min,
                max: $max,
            },
            context: Context::User,
            description: $desc,
            get: |s| SettingValue::Real(s.$field),
            put: |s, v| {
                if let SettingValue::Real(x) = v {
                    s.$field = x
                }
            },
        }
    };
}

/// All settings, sorted by name case-blind (`SHOW ALL` prints them in this
/// order).
pub static DEFS: &[Def] = &[
    bool_def!(
        "bulkread_quarter_rule",
        bulkread_quarter_rule,
        "Scans every table larger than a quarter of shared_buffers through the bulk-read ring, as PostgreSQL does."
    ),
    int_def!(
        "bulkread_ring_size",
        bulkread_ring_kb,
        8,
        i32::MAX as i64,
        Kb,
        User,
        "Sets the size of the buffer ring used by large sequential scans."
    ),
    int_def!(
        "bulkwrite_ring_size",
        bulkwrite_ring_kb,
        8,
        i32::MAX as i64,
        Kb,
        User,
        "Sets the size of the buffer ring used by COPY and INSERT ... SELECT."
    ),
    Def {
        name: "bytea_output",
        kind: Kind::Enum(&BYTEA_OUTPUTS),
        context: Context::User,
        description: "Sets the output format for bytea.",
        get: |s| SettingValue::Enum(s.bytea_output),
        put: |s, v| {
            if let SettingValue::Enum(i) = v {
                s.bytea_output = i
            }
        },
    },
    int_def!(
        "checkpoint_timeout",
        checkpoint_timeout_s,
        30,
        86400,
        Seconds,
        Database,
        "Sets the maximum time between automatic WAL checkpoints."
    ),
    Def {
        name: "client_min_messages",
        kind: Kind::Enum(&MESSAGE_LEVELS),
        context: Context::User,
        description: "Sets the message levels that are sent to the client.",
        get: |s| SettingValue::Enum(s.client_min_messages),
        put: |s, v| {
            if let SettingValue::Enum(i) = v {
                s.client_min_messages = i
            }
        },
    },
    real_def!(
        "cpu_index_tuple_cost",
        cpu_index_tuple_cost,
        0.0,
        f64::MAX,
        "Sets the planner's estimate of the cost of processing each index entry during an index scan."
    ),
    real_def!(
        "cpu_operator_cost",
        cpu_operator_cost,
        0.0,
        f64::MAX,
        "Sets the planner's estimate of the cost of processing each operator or function call."
    ),
    real_def!(
        "cpu_tuple_cost",
        cpu_tuple_cost,
        0.0,
        f64::MAX,
        "Sets the planner's estimate of the cost of processing each tuple (row)."
    ),
    Def {
        name: "DateStyle",
        kind: Kind::DateStyle,
        context: Context::User,
        description: "Sets the display format for date and time values.",
        get: |s| SettingValue::DateStyle(s.datestyle),
        put: |s, v| {
            if let SettingValue::DateStyle(d) = v {
                s.datestyle = d
            }
        },
    },
    int_def!(
        "default_statistics_target",
        default_statistics_target,
        1,
        10000,
        None,
        User,
        "Sets the default statistics target."
    ),
    bool_def!(
        "default_transaction_deferrable",
        default_transaction_deferrable,
        "Sets the default deferrable status of new transactions."
    ),
    Def {
        name: "default_transaction_isolation",
        kind: Kind::Enum(&ISOLATION_LEVELS),
        context: Context::User,
        description: "Sets the transaction isolation level of each new transaction.",
        get: |s| SettingValue::Enum(s.default_transaction_isolation),
        put: |s, v| {
            if let SettingValue::Enum(i) = v {
                s.default_transaction_isolation = i
            }
        },
    },
    bool_def!(
        "default_transaction_read_only",
        default_transaction_read_only,
        "Sets the default read-only status of new transactions."
    ),
    int_def!(
        "effective_cache_size",
        effective_cache_size,
        1,
        i32::MAX as i64,
        Blocks,
        User,
        "Sets the planner's assumption about the total size of the data caches."
    ),
    int_def!(
        "effective_io_concurrency",
        effective_io_concurrency,
        0,
        1000,
        None,
        User,
        "Number of simultaneous requests that can be handled efficiently by the disk subsystem."
    ),
    bool_def!(
        "enable_async_append",
        enable_async_append,
        "Enables the planner's use of async append plans."
    ),
    bool_def!(
        "enable_bitmapscan",
        enable_bitmapscan,
        "Enables the planner's use of bitmap-scan plans."
    ),
    bool_def!(
        "enable_gathermerge",
        enable_gathermerge,
        "Enables the planner's use of gather merge plans."
    ),
    bool_def!(
        "enable_hashagg",
        enable_hashagg,
        "Enables the planner's use of hashed aggregation plans."
    ),
    bool_def!(
        "enable_hashjoin",
        enable_hashjoin,
        "Enables the planner's use of hash join plans."
    ),
    bool_def!(
        "enable_incremental_sort",
        enable_incremental_sort,
        "Enables the planner's use of incremental sort steps."
    ),
    bool_def!(
        "enable_indexonlyscan",
        enable_indexonlyscan,
        "Enables the planner's use of index-only-scan plans."
    ),
    bool_def!(
        "enable_indexscan",
        enable_indexscan,
        "Enables the planner's use of index-scan plans."
    ),
    bool_def!(
        "enable_material",
        enable_material,
        "Enables the planner's use of materialization."
    ),
    bool_def!(
        "enable_memoize",
        enable_memoize,
        "Enables the planner's use of memoization."
    ),
    bool_def!(
        "enable_mergejoin",
        enable_mergejoin,
        "Enables the planner's use of merge join plans."
    ),
    bool_def!(
        "enable_nestloop",
        enable_nestloop,
        "Enables the planner's use of nested-loop join plans."
    ),
    bool_def!(
        "enable_page_summaries",
        enable_page_summaries,
        "Enables aggregates over all-visible pages answered from page summaries."
    ),
    bool_def!(
        "enable_parallel_append",
        enable_parallel_append,
        "Enables the planner's use of parallel append plans."
    ),
    bool_def!(
        "enable_parallel_hash",
        enable_parallel_hash,
        "Enables the planner's use of parallel hash plans."
    ),
    bool_def!(
        "enable_partition_pruning",
        enable_partition_pruning,
        "Enables plan-time and execution-time partition pruning."
    ),
    bool_def!(
        "enable_partitionwise_aggregate",
        enable_partitionwise_aggregate,
        "Enables partitionwise aggregation and grouping."
    ),
    bool_def!(
        "enable_partitionwise_join",
        enable_partitionwise_join,
        "Enables partitionwise join."
    ),
    bool_def!(
        "enable_seqscan",
        enable_seqscan,
        "Enables the planner's use of sequential-scan plans."
    ),
    bool_def!(
        "enable_sort",
        enable_sort,
        "Enables the planner's use of explicit sort steps."
    ),
    bool_def!(
        "enable_tidscan",
        enable_tidscan,
        "Enables the planner's use of TID scan plans."
    ),
    bool_def!(
        "escape_string_warning",
        escape_string_warning,
        "Warn about backslash escapes in ordinary string literals."
    ),
    int_def!(
        "extra_float_digits",
        extra_float_digits,
        -15,
        3,
        None,
        User,
        "Sets the number of digits displayed for floating-point values."
    ),
    Def {
        name: "force_parallel_mode",
        kind: Kind::Enum(&["off", "on", "regress"]),
        context: Context::User,
        description: "Forces use of parallel query facilities.",
        get: |s| SettingValue::Enum(s.force_parallel_mode),
        put: |s, v| {
            if let SettingValue::Enum(i) = v {
                s.force_parallel_mode = i
            }
        },
    },
    int_def!(
        "from_collapse_limit",
        from_collapse_limit,
        1,
        i32::MAX as i64,
        None,
        User,
        "Sets the FROM-list size beyond which subqueries are not collapsed."
    ),
    bool_def!(
        "geqo",
        geqo,
        "Enables genetic query optimization (heapdb: a greedy join order search)."
    ),
    int_def!(
        "geqo_threshold",
        geqo_threshold,
        2,
        i32::MAX as i64,
        None,
        User,
        "Sets the threshold of FROM items beyond which GEQO is used."
    ),
    Def {
        name: "hash_mem_multiplier",
        kind: Kind::Real {
            min: 1.0,
            max: 1000.0,
        },
        context: Context::User,
        description: "Multiple of work_mem to use for hash tables.",
        get: |s| SettingValue::Real(s.hash_mem_multiplier),
        put: |s, v| {
            if let SettingValue::Real(x) = v {
                s.hash_mem_multiplier = x
            }
        },
    },
    Def {
        name: "huge_pages",
        kind: Kind::Bool,
        context: Context::Open,
        description: "Use of huge pages for the buffer pool (transparent huge pages, as PostgreSQL's \"try\").",
        get: |s| SettingValue::Bool(s.huge_pages),
        put: |s, v| {
            if let SettingValue::Bool(b) = v {
                s.huge_pages = b
            }
        },
    },
    Def {
        name: "IntervalStyle",
        kind: Kind::IntervalStyle,
        context: Context::User,
        description: "Sets the display format for interval values.",
        get: |s| SettingValue::IntervalStyle(s.intervalstyle),
        put: |s, v| {
            if let SettingValue::IntervalStyle(i) = v {
                s.intervalstyle = i
            }
        },
    },
    bool_def!(
        "jit",
        jit,
        "Allow JIT compilation."
    ),
    real_def!(
        "jit_above_cost",
        jit_above_cost,
        -1.0,
        f64::MAX,
        "Perform JIT compilation if query is more expensive."
    ),
    real_def!(
        "jit_inline_above_cost",
        jit_inline_above_cost,
        -1.0,
        f64::MAX,
        "Perform JIT inlining if query is more expensive."
    ),
    real_def!(
        "jit_optimize_above_cost",
        jit_optimize_above_cost,
        -1.0,
        f64::MAX,
        "Optimize JIT-compiled functions if query is more expensive."
    ),
    int_def!(
        "join_collapse_limit",
        join_collapse_limit,
        1,
        i32::MAX as i64,
        None,
        User,
        "Sets the FROM-list size beyond which JOIN constructs are not flattened."
    ),
    int_def!(
        "maintenance_io_concurrency",
        maintenance_io_concurrency,
        0,
        1000,
        None,
        User,
        "A variant of effective_io_concurrency that is used for maintenance work."
    ),
    int_def!(
        "maintenance_work_mem",
        maintenance_work_mem_kb,
        1024,
        i32::MAX as i64,
        Kb,
        User,
        "Sets the maximum memory to be used for maintenance operations."
    ),
    int_def!(
        "max_parallel_maintenance_workers",
        max_parallel_maintenance_workers,
        0,
        1024,
        None,
        User,
        "Sets the maximum number of parallel processes per maintenance operation."
    ),
    int_def!(
        "max_parallel_workers_per_gather",
        max_parallel_workers_per_gather,
        0,
        1024,
        None,
        User,
        "Sets the maximum number of parallel processes per executor node."
    ),
    int_def!(
        "max_wal_size",
        max_wal_size_mb,
        2,
        i32::MAX as i64,
        Mb,
        Database,
        "Sets the WAL size that triggers a checkpoint."
    ),
    int_def!(
        "min_parallel_index_scan_size",
        min_parallel_index_scan_size,
        0,
        (i32::MAX / 3) as i64,
        Blocks,
        User,
        "Sets the minimum amount of index data for a parallel scan."
    ),
    int_def!(
        "min_parallel_table_scan_size",
        min_parallel_table_scan_size,
        0,
        (i32::MAX / 3) as i64,
        Blocks,
        User,
        "Sets the minimum amount of table data for a parallel scan."
    ),
    int_def!(
        "packed_cache_size",
        packed_cache_kb,
        0,
        i32::MAX as i64,
        Kb,
        User,
        "Sets the memory of the packed column cache of all-visible pages (0 turns it off)."
    ),
    bool_def!(
        "parallel_leader_participation",
        parallel_leader_participation,
        "Controls whether Gather and Gather Merge also run subplans."
    ),
    real_def!(
        "parallel_setup_cost",
        parallel_setup_cost,
        0.0,
        f64::MAX,
        "Sets the planner's estimate of the cost of starting up worker processes for parallel query."
    ),
    real_def!(
        "parallel_tuple_cost",
        parallel_tuple_cost,
        0.0,
        f64::MAX,
        "Sets the planner's estimate of the cost of passing each tuple (row) from worker to leader backend."
    ),
    real_def!(
        "random_page_cost",
        random_page_cost,
        0.0,
        f64::MAX,
        "Sets the planner's estimate of the cost of a nonsequentially fetched disk page."
    ),
    real_def!(
        "seq_page_cost",
        seq_page_cost,
        0.0,
        f64::MAX,
        "Sets the planner's estimate of the cost of a sequentially fetched disk page."
    ),
    Def {
        name: "server_version",
        kind: Kind::Text,
        context: Context::Internal,
        description: "Shows the server version.",
        get: |_| SettingValue::Text(env!("CARGO_PKG_VERSION").to_string()),
        put: |_, _| {},
    },
    int_def!(
        "shared_buffers",
        shared_buffers,
        16,
        (i32::MAX / 2) as i64,
        Blocks,
        Open,
        "Sets the number of shared memory buffers used by the server."
    ),
    bool_def!(
        "standard_conforming_strings",
        standard_conforming_strings,
        "Causes '...' strings to treat backslashes literally."
    ),
    Def {
        name: "synchronous_commit",
        kind: Kind::SyncCommit,
        context: Context::User,
        description: "Sets the current transaction's synchronization level.",
        get: |s| SettingValue::SyncCommit(s.synchronous_commit),
        put: |s, v| {
            if let SettingValue::SyncCommit(c) = v {
                s.synchronous_commit = c
            }
        },
    },
    Def {
        name: "TimeZone",
        kind: Kind::TimeZone,
        context: Context::User,
        description: "Sets the time zone for displaying and interpreting time stamps.",
        get: |s| SettingValue::Text(s.timezone.to_string()),
        put: |s, v| {
            if let SettingValue::Text(t) = v {
                s.timezone = Arc::from(t)
            }
        },
    },
    int_def!(
        "vacuum_ring_size",
        vacuum_ring_kb,
        8,
        i32::MAX as i64,
        Kb,
        User,
        "Sets the size of the buffer ring used by VACUUM."
    ),
    Def {
        name: "wal_compression",
        kind: Kind::Bool,
        context: Context::Database,
        description: "Compresses full-page writes written in WAL file with specified method.",
        get: |s| SettingValue::Bool(s.wal_compression),
        put: |s, v| {
            if let SettingValue::Bool(b) = v {
                s.wal_compression = b
            }
        },
    },
    int_def!(
        "work_mem",
        work_mem_kb,
        64,
        i32::MAX as i64,
        Kb,
        User,
        "Sets the maximum memory to be used for query workspaces."
    ),
];

/// Finds a setting by name, case-insensitively.
pub fn lookup(name: &str) -> Result<&'static Def> {
    DEFS.iter()
        .find(|d| d.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            Error::new(
                SqlState::UndefinedObject,
                format!("unrecognized configuration parameter \"{name}\""),
            )
        })
}

impl Settings {
    /// `SHOW name`: the value as PostgreSQL prints it.
    pub fn show(&self, name: &str) -> Result<String> {
        let def = lookup(name)?;
        Ok(def.display(&(def.get)(self)))
    }

    /// `SHOW ALL`: (name, setting, description) for every setting, by name.
    pub fn show_all(&self) -> Vec<(&'static str, String, &'static str)> {
        DEFS.iter()
            .map(|d| (d.name, d.display(&(d.get)(self)), d.description))
            .collect()
    }

    /// `SET name = value` from a session: checks that the setting may be
    /// changed by a session and that the value is valid, then stores it.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let def = lookup(name)?;
        def.check_session_settable()?;
        let parsed = def.parse_for(value, self)?;
        (def.put)(self, parsed);
        Ok(())
    }

    /// Sets any setting, including those fixed once the database is open:
    /// for `Database::open` options and the shell's `--shared-buffers`.
    pub fn set_at_open(&mut self, name: &str, value: &str) -> Result<()> {
        let def = lookup(name)?;
        if def.context == Context::Internal {
            return Err(def.cannot_change());
        }
        let parsed = def.parse_for(value, self)?;
        (def.put)(self, parsed);
        Ok(())
    }

    /// `RESET name` / `SET name TO DEFAULT`: back to `defaults`' value.
    pub fn reset(&mut self, name: &str, defaults: &Settings) -> Result<()> {
        let def = lookup(name)?;
        def.check_session_settable()?;
        (def.put)(self, (def.get)(defaults));
        Ok(())
    }

    /// `RESET ALL`: every session-settable setting back to `defaults`.
    pub fn reset_all(&mut self, defaults: &Settings) {
        for def in DEFS.iter().filter(|d| d.context == Context::User) {
            (def.put)(self, (def.get)(defaults));
        }
    }

    /// The bulk-read ring size in 8 KiB pages (at least one).
    pub fn bulkread_ring_pages(&self) -> usize {
        kb_to_pages(self.bulkread_ring_kb)
    }

    /// The bulk-write ring size in 8 KiB pages (at least one).
    pub fn bulkwrite_ring_pages(&self) -> usize {
        kb_to_pages(self.bulkwrite_ring_kb)
    }

    /// The vacuum ring size in 8 KiB pages (at least one).
    pub fn vacuum_ring_pages(&self) -> usize {
        kb_to_pages(self.vacuum_ring_kb)
    }
}

fn kb_to_pages(kb: i64) -> usize {
    (kb / 8).max(1) as usize
}

/// PostgreSQL's memory units, each in kB, largest first.
const MEMORY_UNITS: [(&str, f64); 5] = [
    ("TB", 1024.0 * 1024.0 * 1024.0),
    ("GB", 1024.0 * 1024.0),
    ("MB", 1024.0),
    ("kB", 1.0),
    ("B", 1.0 / 1024.0),
];

/// PostgreSQL's time units, each in seconds, largest first.
const TIME_UNITS: [(&str, f64); 6] = [
    ("d", 86400.0),
    ("h", 3600.0),
    ("min", 60.0),
    ("s", 1.0),
    ("ms", 0.001),
    ("us", 0.000001),
];

impl Def {
    fn check_session_settable(&self) -> Result<()> {
        match self.context {
            Context::User => Ok(()),
            Context::Open => Err(Error::new(
                SqlState::CantChangeRuntimeParam,
                format!(
                    "parameter \"{}\" cannot be changed without restarting the server",
                    self.name
                ),
            )),
            Context::Database | Context::Internal => Err(self.cannot_change()),
        }
    }

    fn cannot_change(&self) -> Error {
        let text = if self.context == Context::Internal {
            format!("parameter \"{}\" cannot be changed", self.name)
        } else {
            format!("parameter \"{}\" cannot be changed now", self.name)
        };
        Error::new(SqlState::CantChangeRuntimeParam, text)
    }

    fn invalid(&self, value: &str) -> Error {
        Error::new(
            SqlState::InvalidParameterValue,
            format!("invalid value for parameter \"{}\": \"{value}\"", self.name),
        )
    }

    /// Parses `value` as this setting's input, with PostgreSQL's errors.
    pub fn parse(&self, value: &str) -> Result<SettingValue> {
        self.parse_for(value, &Settings::default())
    }

    /// Parses `value` as this setting's input when the settings are
    /// `current` (a `DateStyle` list changes only what it names).
    pub fn parse_for(&self, value: &str, current: &Settings) -> Result<SettingValue> {
        match self.kind {
            Kind::DateStyle => DateStyle::parse(value, current.datestyle)
                .map(SettingValue::DateStyle)
                .map_err(|detail| self.invalid(value).with_detail(detail)),
            Kind::IntervalStyle => IntervalStyle::parse(value)
                .map(SettingValue::IntervalStyle)
                .ok_or_else(|| {
                    let names: Vec<&str> = IntervalStyle::NAMES.iter().map(|(n, _)| *n).collect();
                    self.invalid(value)
                        .with_hint(format!("Available values: {}.", names.join(", ")))
                }),
            Kind::TimeZone => style::parse_time_zone(value)
                .map(SettingValue::Text)
                .ok_or_else(|| self.invalid(value)),
            _ => self.parse_plain(value),
        }
    }

    /// [`Def::parse_for`] for the kinds that do not depend on the settings.
    fn parse_plain(&self, value: &str) -> Result<SettingValue> {
        match self.kind {
            Kind::Int { min, max, unit } => {
                let n = self.parse_int(value, unit)?;
                if n < min || n > max {
                    let shown = match unit_suffix(unit) {
                        "" => n.to_string(),
                        s => format!("{n} {s}"),
                    };
                    return Err(Error::new(
                        SqlState::InvalidParameterValue,
                        format!(
                            "{shown} is outside the valid range for parameter \"{}\" ({min} .. {max})",
                            self.name
                        ),
                    ));
                }
                Ok(SettingValue::Int(n))
            }
            Kind::Real { min, max } => {
                let x: f64 = value.trim().parse().map_err(|_| self.invalid(value))?;
                if !x.is_finite() {
                    return Err(self.invalid(value));
                }
                if x < min || x > max {
                    return Err(Error::new(
                        SqlState::InvalidParameterValue,
                        format!(
                            "{} is outside the valid range for parameter \"{}\" ({} .. {})",
                            format_g(x),
                            self.name,
                            format_g(min),
                            format_g(max)
                        ),
                    ));
                }
                Ok(SettingValue::Real(x))
            }
            Kind::Bool => parse_bool(value).map(SettingValue::Bool).ok_or_else(|| {
                Error::new(
                    SqlState::InvalidParameterValue,
                    format!("parameter \"{}\" requires a Boolean value", self.name),
                )
            }),
            Kind::SyncCommit => {
                let lower = value.trim().to_ascii_lowercase();
                let word = SyncCommit::NAMES.iter().find(|(n, _)| *n == lower);
                match (word, parse_bool(&lower)) {
                    (Some((_, v)), _) => Ok(SettingValue::SyncCommit(*v)),
                    (None, Some(true)) => Ok(SettingValue::SyncCommit(SyncCommit::On)),
                    (None, Some(false)) => Ok(SettingValue::SyncCommit(SyncCommit::Off)),
                    (None, None) => Err(self.invalid(value).with_hint(
                        "Available values: local, remote_write, remote_apply, on, off.",
                    )),
                }
            }
            Kind::Text => Err(self.cannot_change()),
            Kind::Enum(words) => words
                .iter()
                .position(|w| w.eq_ignore_ascii_case(value.trim()))
                .map(|i| SettingValue::Enum(i as u8))
                .ok_or_else(|| {
                    self.invalid(value)
                        .with_hint(format!("Available values: {}.", words.join(", ")))
                }),
            Kind::DateStyle | Kind::IntervalStyle | Kind::TimeZone => {
                self.parse_for(value, &Settings::default())
            }
        }
    }

    /// Parses a number with an optional unit into the base unit, rounding
    /// as PostgreSQL's `parse_int` does (half away from zero).
    fn parse_int(&self, value: &str, unit: Unit) -> Result<i64> {
        let text = value.trim();
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
            .unwrap_or(text.len());
        let (num, rest) = text.split_at(split);
        // "1e3" is a number, but "1MB" must not read its "B"... only digits,
        // sign, point and an exponent belong to the number.
        let number: f64 = num.parse().map_err(|_| self.invalid(value))?;
        let suffix = rest.trim();
        let scaled = if suffix.is_empty() {
            number
        } else {
            let (units, hint): (&[(&str, f64)], &str) = match unit {
                Unit::Kb | Unit::Mb | Unit::Blocks => (
                    &MEMORY_UNITS,
                    "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".",
                ),
                Unit::Seconds => (
                    &TIME_UNITS,
                    "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".",
                ),
                Unit::None => return Err(self.invalid(value)),
            };
            let Some((_, factor)) = units.iter().find(|(u, _)| *u == suffix) else {
                return Err(self.invalid(value).with_hint(hint));
            };
            // Convert from the unit to this setting's base unit.
            number * factor / base_factor(unit)
        };
        let rounded = scaled.round();
        if !rounded.is_finite() || rounded > i32::MAX as f64 || rounded < i32::MIN as f64 {
            return Err(self
                .invalid(value)
                .with_hint("Value exceeds integer range."));
        }
        Ok(rounded as i64)
    }

    /// Formats a value as `SHOW` prints it.
    pub fn display(&self, v: &SettingValue) -> String {
        match (v, self.kind) {
            (SettingValue::Int(n), Kind::Int { unit, .. }) => display_int(*n, unit),
            (SettingValue::Real(x), _) => format_g(*x),
            (SettingValue::Bool(b), _) => if *b { "on" } else { "off" }.to_string(),
            (SettingValue::SyncCommit(c), _) => c.name().to_string(),
            (SettingValue::Text(t), _) => t.clone(),
            (SettingValue::DateStyle(d), _) => d.text(),
            (SettingValue::IntervalStyle(i), _) => i.name().to_string(),
            (SettingValue::Enum(i), Kind::Enum(words)) => words
                .get(usize::from(*i))
                .copied()
                .unwrap_or("")
                .to_string(),
            (SettingValue::Enum(i), _) => i.to_string(),
            (SettingValue::Int(n), _) => n.to_string(),
        }
    }
}

/// The size of one base unit in the unit table's terms (kB or seconds).
fn base_factor(unit: Unit) -> f64 {
    match unit {
        Unit::Kb | Unit::None | Unit::Seconds => 1.0,
        Unit::Mb => 1024.0,
        Unit::Blocks => 8.0,
    }
}

fn unit_suffix(unit: Unit) -> &'static str {
    match unit {
        Unit::None => "",
        Unit::Kb => "kB",
        Unit::Mb => "MB",
        Unit::Blocks => "8kB",
        Unit::Seconds => "s",
    }
}

/// Prints in the largest unit that divides the value exactly, as
/// PostgreSQL's `convert_int_from_base_unit` does for SHOW.
fn display_int(n: i64, unit: Unit) -> String {
    let units: &[(&str, f64)] = match unit {
        Unit::None => return n.to_string(),
        Unit::Seconds => &TIME_UNITS[..4],
        _ => &MEMORY_UNITS[..4],
    };
    let base = n as f64 * base_factor(unit);
    if n == 0 {
        return format!("0{}", units[units.len() - 1].0);
    }
    for (name, factor) in units {
        let q = base / factor;
        if q.fract() == 0.0 {
            return format!("{}{name}", q as i64);
        }
    }
    format!("{n}{}", unit_suffix(unit))
}

/// A float as C's `%g` prints it (six significant digits, no trailing
/// zeros), as PostgreSQL shows real settings.
fn format_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-5..6).contains(&exp) {
        let s = format!("{x:.5e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// PostgreSQL's `parse_bool`: on/off, true/false, yes/no, 1/0 and unique
/// prefixes of the words.
pub fn parse_bool(value: &str) -> Option<bool> {
    let v = value.trim().to_ascii_lowercase();
    if v.is_empty() {
        return None;
    }
    let prefix_of = |word: &str| word.starts_with(v.as_str());
    match v.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        "on" => Some(true),
        "of" | "off" => Some(false),
        _ if prefix_of("true") || prefix_of("yes") => Some(true),
        _ if prefix_of("false") || prefix_of("no") => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    //! Expected strings are PostgreSQL 15's replies to the same SET/SHOW.
    use super::*;

    fn set_err(name: &str, value: &str) -> Error {
        Settings::default().set(name, value).unwrap_err()
    }

    #[test]
    fn defaults_show_like_postgresql() {
        let s = Settings::default();
        assert_eq!(s.show("work_mem").unwrap(), "4MB");
        assert_eq!(s.show("WORK_MEM").unwrap(), "4MB");
        assert_eq!(s.show("shared_buffers").unwrap(), "128MB");
        assert_eq!(s.show("synchronous_commit").unwrap(), "on");
        assert_eq!(s.show("max_wal_size").unwrap(), "1GB");
        assert_eq!(s.show("checkpoint_timeout").unwrap(), "5min");
        assert_eq!(s.show("maintenance_io_concurrency").unwrap(), "10");
        assert_eq!(s.show("enable_hashjoin").unwrap(), "on");
        assert_eq!(s.show("bulkread_ring_size").unwrap(), "256kB");
        assert_eq!(s.bulkwrite_ring_pages(), 2048);
    }

    #[test]
    fn memory_values_with_units() {
        let mut s = Settings::default();
        s.set("work_mem", "1000").unwrap();
        assert_eq!(s.show("work_mem").unwrap(), "1000kB");
        s.set("work_mem", "1GB").unwrap();
        assert_eq!(s.show("work_mem").unwrap(), "1GB");
        s.set("work_mem", "1.5MB").unwrap();
        assert_eq!(s.show("work_mem").unwrap(), "1536kB");
        s.set("work_mem", "64 kB").unwrap();
        assert_eq!(s.work_mem_kb, 64);
        s.set("work_mem", "1e3").unwrap();
        assert_eq!(s.work_mem_kb, 1000);
    }

    #[test]
    fn bad_values_give_postgresql_errors_and_change_nothing() {
        let e = set_err("work_mem", "abc");
        assert_eq!(e.code, SqlState::InvalidParameterValue);
        assert_eq!(
            e.message,
            "invalid value for parameter \"work_mem\": \"abc\""
        );
        let e = set_err("work_mem", "10");
        assert_eq!(
            e.message,
            "10 kB is outside the valid range for parameter \"work_mem\" (64 .. 2147483647)"
        );
        let e = set_err("work_mem", "1mb");
        assert_eq!(
            e.hint.as_deref(),
            Some("Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".")
        );
        let e = set_err("work_mem", "3000000000");
        assert_eq!(e.hint.as_deref(), Some("Value exceeds integer range."));
        let e = set_err("nosuch", "1");
        assert_eq!(e.code, SqlState::UndefinedObject);
        assert_eq!(e.message, "unrecognized configuration parameter \"nosuch\"");
        let e = set_err("synchronous_commit", "maybe");
        assert_eq!(
            e.hint.as_deref(),
            Some("Available values: local, remote_write, remote_apply, on, off.")
        );
        let e = set_err("enable_hashjoin", "maybe");
        assert_eq!(
            e.message,
            "parameter \"enable_hashjoin\" requires a Boolean value"
        );
        let e = set_err("default_statistics_target", "0");
        assert_eq!(
            e.message,
            "0 is outside the valid range for parameter \"default_statistics_target\" (1 .. 10000)"
        );
        let e = set_err("shared_buffers", "1GB");
        assert_eq!(
            e.message,
            "parameter \"shared_buffers\" cannot be changed without restarting the server"
        );
        let e = set_err("checkpoint_timeout", "10");
        assert_eq!(
            e.message,
            "parameter \"checkpoint_timeout\" cannot be changed now"
        );
        let e = set_err("server_version", "1");
        assert_eq!(e.message, "parameter \"server_version\" cannot be changed");
        let mut s = Settings::default();
        let _ = s.set("work_mem", "1");
        assert_eq!(s, Settings::default());
    }

    #[test]
    fn hash_mem_multiplier_as_postgresql() {
        let mut s = Settings::default();
        assert_eq!(s.show("hash_mem_multiplier").unwrap(), "2");
        s.set("hash_mem_multiplier", "1.5").unwrap();
        assert_eq!(s.show("hash_mem_multiplier").unwrap(), "1.5");
        s.set("hash_mem_multiplier", "1e3").unwrap();
        assert_eq!(s.show("hash_mem_multiplier").unwrap(), "1000");
        s.set("hash_mem_multiplier", "123.456789").unwrap();
        assert_eq!(s.show("hash_mem_multiplier").unwrap(), "123.457");
        assert_eq!(
            set_err("hash_mem_multiplier", "0.5").message,
            "0.5 is outside the valid range for parameter \"hash_mem_multiplier\" (1 .. 1000)"
        );
        let e = set_err("hash_mem_multiplier", "1.5MB");
        assert_eq!(e.code, SqlState::InvalidParameterValue);
        assert_eq!(
            e.message,
            "invalid value for parameter \"hash_mem_multiplier\": \"1.5MB\""
        );
        assert_eq!(s.hash_mem_multiplier, 123.456789);
    }

    #[test]
    fn booleans_and_sync_commit_spellings() {
        let mut s = Settings::default();
        s.set("synchronous_commit", "OFF").unwrap();
        assert_eq!(s.synchronous_commit, SyncCommit::Off);
        assert!(!s.synchronous_commit.waits_for_flush());
        s.set("synchronous_commit", "1").unwrap();
        assert_eq!(s.show("synchronous_commit").unwrap(), "on");
        s.set("enable_hashagg", "of").unwrap();
        assert!(!s.enable_hashagg);
        s.set("enable_hashagg", "y").unwrap();
        assert!(s.enable_hashagg);
        assert_eq!(parse_bool("o"), None);
    }

    #[test]
    fn reset_and_open_time_settings() {
        let defaults = Settings::default();
        let mut s = defaults.clone();
        s.set("work_mem", "1GB").unwrap();
        s.set("enable_hashjoin", "off").unwrap();
        s.reset("work_mem", &defaults).unwrap();
        assert_eq!(s.work_mem_kb, 4096);
        s.reset_all(&defaults);
        assert!(s.enable_hashjoin);
        s.set_at_open("shared_buffers", "1GB").unwrap();
        assert_eq!(s.shared_buffers, 131072);
        s.set_at_open("checkpoint_timeout", "90").unwrap();
        assert_eq!(s.show("checkpoint_timeout").unwrap(), "90s");
        s.set_at_open("max_wal_size", "64MB").unwrap();
        assert_eq!(s.max_wal_size_mb, 64);
        assert!(s.huge_pages);
        s.set_at_open("huge_pages", "off").unwrap();
        assert!(!s.huge_pages);
        assert!(s.set("huge_pages", "on").is_err(), "fixed while open");
        assert_eq!(s.show_all().len(), DEFS.len());
        assert!(DEFS
            .windows(2)
            .all(|w| w[0].name.to_ascii_lowercase() < w[1].name.to_ascii_lowercase()));
    }
}
