//! Code shared by the integration tests.

pub mod csv_reference;
