//! The `fem` command line: run, check and inspect finite-element inputs (the code is
//! [`fem::cli`], which a downstream program runs with its own models).

fn main() -> std::process::ExitCode {
    fem::cli::main::<fem::input::ModelInput>()
}
