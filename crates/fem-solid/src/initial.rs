//! Initial velocities of a solid: uniform, a rigid rotation `v = v₀ + ω × (X − X₀)`, or three
//! expressions of the reference coordinates `x, y, z` (`exmex` syntax, as time functions).

use exmex::{Express, FlatEx};

/// An initial velocity field over the reference configuration.
#[derive(Clone, Debug)]
pub enum InitialVelocity {
    /// Zero.
    Zero,
    /// The rigid motion `v₀ + ω × (X − X₀)`.
    Rigid {
        /// `v₀`.
        velocity: [f64; 3],
        /// `ω` (rad/s).
        omega: [f64; 3],
        /// `X₀`.
        centre: [f64; 3],
    },
    /// Each component an expression of `x, y, z`.
    Expressions(Box<[FlatEx<f64>; 3]>),
}

/// Parses an expression of `x, y, z`; the error is the message to show.
pub fn parse_expression(source: &str) -> Result<FlatEx<f64>, String> {
    // The expression engine evaluates in a time that grows with the square of the length, once
    // per node: bounded as the time functions are (`fem_constraints::function`).
    fem_constraints::function::check_expression_length(source).map_err(|e| e.to_string())?;
    let terms = source
        .split(|c: char| "+-*/^(),<>=!&|".contains(c))
        .filter(|w| !w.trim().is_empty())
        .count();
    let max = fem_constraints::function::MAX_EXPRESSION_TOKENS / 2;
    if terms > max {
        return Err(format!(
            "'{}…' has {terms} terms; at most {max} are accepted (evaluating one costs the square \
             of its length): write it shorter",
            source.chars().take(40).collect::<String>()
        ));
    }
    let e = exmex::parse::<f64>(source).map_err(|e| format!("'{source}': {}", e.msg()))?;
    if let Some(bad) = e
        .var_names()
        .iter()
        .find(|n| !["x", "y", "z"].contains(&n.as_str()))
    {
        return Err(format!(
            "'{source}': unknown name '{bad}' (an initial velocity is a function of x, y, z)"
        ));
    }
    Ok(e)
}

impl InitialVelocity {
    /// The velocity at reference point `p`.
    pub fn at(&self, p: [f64; 3]) -> [f64; 3] {
        match self {
            InitialVelocity::Zero => [0.0; 3],
            InitialVelocity::Rigid {
                velocity,
                omega,
                centre,
            } => {
                let r: [f64; 3] = std::array::from_fn(|i| p[i] - centre[i]);
                [
                    velocity[0] + omega[1] * r[2] - omega[2] * r[1],
                    velocity[1] + omega[2] * r[0] - omega[0] * r[2],
                    velocity[2] + omega[0] * r[1] - omega[1] * r[0],
                ]
            }
            InitialVelocity::Expressions(e) => std::array::from_fn(|i| {
                let values: Vec<f64> = e[i]
                    .var_names()
                    .iter()
                    .map(|n| match n.as_str() {
                        "x" => p[0],
                        "y" => p[1],
                        _ => p[2],
                    })
                    .collect();
                e[i].eval(&values).unwrap_or(f64::NAN)
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rigid_rotation_and_expressions_agree() {
        let rigid = InitialVelocity::Rigid {
            velocity: [0.0; 3],
            omega: [1.0, 0.0, 0.0],
            centre: [0.0, 0.5, 0.5],
        };
        let expr = InitialVelocity::Expressions(Box::new([
            parse_expression("0").unwrap(),
            parse_expression("-(z - 0.5)").unwrap(),
            parse_expression("y - 0.5").unwrap(),
        ]));
        let p = [0.3, 0.9, -0.2];
        assert_eq!(rigid.at(p), expr.at(p));
        assert!(parse_expression("x + t").unwrap_err().contains("'t'"));
    }
}
