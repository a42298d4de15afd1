"""The stationary distribution of a Markov chain: by matrix powers and by eigenvectors."""


def run(np):
    P = np.array(
        [
            [0.9, 0.075, 0.025],
            [0.15, 0.8, 0.05],
            [0.25, 0.25, 0.5],
        ]
    )
    assert np.allclose(P.sum(axis=1), 1.0)
    by_power = np.linalg.matrix_power(P, 64)[0]
    eigenvalues, eigenvectors = np.linalg.eig(P.T)
    k = np.argmin(np.abs(eigenvalues - 1.0))
    stationary = np.real(eigenvectors[:, k])
    stationary = stationary / stationary.sum()
    # Simulate the distribution forward from a point mass.
    dist = np.array([0.0, 0.0, 1.0])
    history = [dist]
    for _ in range(30):
        dist = dist @ P
        history.append(dist)
    history = np.array(history)
    gaps = np.abs(history - stationary).sum(axis=1)
    mixing_step = int(np.argmax(gaps < 1e-3))
    return {
        "by_power": by_power,
        "by_eig": stationary,
        "second_eigenvalue": np.sort(np.abs(eigenvalues))[-2],
        "history": history,
        "mixing_step": mixing_step,
        "agree": np.allclose(by_power, stationary),
    }
