"""Conway's Game of Life on a torus, neighbours counted with np.roll."""


def step(np, board):
    neighbours = sum(
        np.roll(np.roll(board, dy, axis=0), dx, axis=1)
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if (dy, dx) != (0, 0)
    )
    born = (neighbours == 3) & (board == 0)
    survive = ((neighbours == 2) | (neighbours == 3)) & (board == 1)
    return (born | survive).astype(np.uint8)


def run(np):
    board = np.zeros((16, 16), dtype=np.uint8)
    glider = np.array([[0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=np.uint8)
    board[1:4, 1:4] = glider
    board[10, 8:11] = 1  # a blinker
    population = []
    for _ in range(12):
        board = step(np, board)
        population.append(int(board.sum()))
    rows, cols = np.nonzero(board)
    rng = np.random.default_rng(7)
    soup = (rng.random((16, 16)) < 0.3).astype(np.uint8)
    for _ in range(10):
        soup = step(np, soup)
    return {
        "board": board,
        "population": np.array(population),
        "live_rows": rows,
        "live_cols": cols,
        "soup": soup,
        "soup_alive": soup.sum(),
        "dtype": str(board.dtype),
    }
